import { MethodNotAllowedError, NotFoundError } from '../errors.ts';
import type { HttpMiddleware } from './http-types.ts';
import { matchRoute, requestMethod, requestPath, type RouteKey } from './routes.ts';

/**
 * 404 for a path the API does not have, 405 (with `Allow`) for a known path with another method.
 * Only the function that owns a route answers it: the `$default` route is served by whichever
 * function API Gateway sends it to, so a route owned by another function is "not found" here.
 */
export const routeGuard = (route: RouteKey): HttpMiddleware => ({
  before: (request) => {
    const match = matchRoute(requestMethod(request.event), requestPath(request.event));
    if (match.kind === 'not-found') throw new NotFoundError();
    if (match.kind === 'method-not-allowed') throw new MethodNotAllowedError(match.allowed);
    if (match.routeKey !== route) throw new NotFoundError();
  },
});
