import { MethodNotAllowedError, NotFoundError } from '../errors.ts';
import type { HttpMiddleware } from './http-types.ts';

/** Every route of the HTTP API. Anything else reaches the `$default` route and gets 404 or 405. */
const ROUTES = [
  { method: 'POST', path: '/credentials' },
  { method: 'GET', path: '/devices' },
  { method: 'GET', path: '/devices/summary' },
  { method: 'GET', path: '/mobile-devices' },
  { method: 'GET', path: '/mobile-devices/summary' },
  { method: 'POST', path: '/api/users' },
  { method: 'GET', path: '/api/users/{id}' },
] as const;

/** A route as `METHOD /path`, one per route (distributed over a union of routes). */
type KeyOf<Route> = Route extends { method: infer Method extends string; path: infer Path extends string } ? `${Method} ${Path}` : never;

/** One route of ROUTES (`GET /api/users/{id}`): only the pairs served, not every method with every path. */
export type RouteKey = KeyOf<(typeof ROUTES)[number]>;

// Exact, as API Gateway matches routes: `/credentials/` is another path, answered by `$default`.
const patternOf = (path: string): RegExp => new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`);

const COMPILED = ROUTES.map((route) => ({ ...route, pattern: patternOf(route.path) }));

export type RouteMatch = { kind: 'found'; routeKey: RouteKey } | { kind: 'method-not-allowed'; allowed: string[] } | { kind: 'not-found' };

export const matchRoute = (method: string, path: string): RouteMatch => {
  const samePath = COMPILED.filter((route) => route.pattern.test(path));
  if (samePath.length === 0) return { kind: 'not-found' };
  const exact = samePath.find((route) => route.method === method.toUpperCase());
  if (exact) return { kind: 'found', routeKey: `${exact.method} ${exact.path}` as RouteKey };
  return { kind: 'method-not-allowed', allowed: samePath.map((route) => route.method) };
};

/** The request's method as API Gateway (HTTP API, payload 2.0) reports it. */
export const requestMethod = (event: { requestContext?: { http?: { method?: string } } }): string =>
  event.requestContext?.http?.method ?? 'GET';

/** The request's path as API Gateway (HTTP API, payload 2.0) reports it. */
export const requestPath = (event: { rawPath?: string; requestContext?: { http?: { path?: string } } }): string =>
  event.rawPath ?? event.requestContext?.http?.path ?? '/';

/**
 * Lets a request reach the handler only when it came by one of this function's own routes: 404 for
 * a path the API does not have (a trailing slash or another spelling included), 405 (with `Allow`)
 * for a route's path with another method. API Gateway names the route in `routeKey`: a request that
 * came by `$default` never runs a route's handler, whatever its path, since `$default` requires no
 * scope (docs/architecture.md#routes-and-the-default-route). A request let through has its route in
 * `routeKey` (`routeOf`), a direct invocation's too.
 */
export const routeGuard = (routes: readonly RouteKey[]): HttpMiddleware => ({
  before: (request) => {
    const match = matchRoute(requestMethod(request.event), requestPath(request.event));
    if (match.kind === 'method-not-allowed') throw new MethodNotAllowedError(match.allowed);
    if (match.kind === 'not-found' || !routes.includes(match.routeKey)) throw new NotFoundError();
    // An event without routeKey (a direct invocation) is judged by its method and path alone.
    const event = request.event as { routeKey?: string };
    if ((event.routeKey ?? match.routeKey) !== match.routeKey) throw new NotFoundError();
    event.routeKey = match.routeKey;
  },
});

/** The route of a request `routeGuard` let through. */
export const routeOf = (event: object): RouteKey => (event as { routeKey: RouteKey }).routeKey;
