import { matchRoute, type RouteKey } from '../../lib/http/routes.ts';

/**
 * Every route of the HTTP API. Keyed by the API's RouteKey, so tsc refuses this table when the API
 * gains a route that is missing here or loses one that is named here (no vitest imports).
 */
const API_ROUTE_TABLE: Record<RouteKey, true> = {
  'POST /credentials': true,
  'GET /devices': true,
  'GET /devices/summary': true,
  'GET /mobile-devices': true,
  'GET /mobile-devices/summary': true,
  'POST /api/users': true,
  'GET /api/users/{id}': true,
};

/**
 * The route keys of the HTTP API (`GET /api/users/{id}`), each checked at run time too: a request
 * with its method to its path (any value in a path parameter) must be routed to it.
 */
export const apiRouteKeys = (): RouteKey[] =>
  (Object.keys(API_ROUTE_TABLE) as RouteKey[]).map((key) => {
    const [method = '', path = ''] = key.split(' ');
    const match = matchRoute(method, path.replace(/\{[^}]+\}/g, 'sample'));
    if (match.kind !== 'found' || match.routeKey !== key) throw new Error(`the API does not route ${key}: ${JSON.stringify(match)}`);
    return key;
  });
