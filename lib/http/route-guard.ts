import { MethodNotAllowedError, NotFoundError } from '../errors.ts';
import type { HttpMiddleware } from './http-types.ts';
import { matchRoute, requestMethod, requestPath, type RouteKey } from './routes.ts';

/**
 * Lets a request reach the handler only when it came by this function's own route: 404 for a path
 * the API does not have (a trailing slash or another spelling included), 405 (with `Allow`) for a
 * route's path with another method. API Gateway names the route in `routeKey`: a request that came
 * by `$default` never runs a route's handler, whatever its path, since `$default` requires no scope
 * (docs/architecture.md#routes-and-the-default-route).
 */
export const routeGuard = (route: RouteKey): HttpMiddleware => ({
  before: (request) => {
    const match = matchRoute(requestMethod(request.event), requestPath(request.event));
    if (match.kind === 'method-not-allowed') throw new MethodNotAllowedError(match.allowed);
    // An event without routeKey (a direct invocation) is judged by its method and path alone.
    const cameBy = (request.event as { routeKey?: string }).routeKey ?? route;
    if (match.kind === 'not-found' || match.routeKey !== route || cameBy !== route) throw new NotFoundError();
  },
});
