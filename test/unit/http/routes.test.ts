import { describe, expect, it } from 'vitest';
import { matchRoute } from '../../../lib/http/routes.ts';

describe('matchRoute', () => {
  it('finds each route of the API, path parameters included', () => {
    expect(matchRoute('POST', '/credentials')).toEqual({ kind: 'found', routeKey: 'POST /credentials' });
    expect(matchRoute('get', '/devices')).toEqual({ kind: 'found', routeKey: 'GET /devices' });
    expect(matchRoute('GET', '/api/users/5f0c')).toEqual({ kind: 'found', routeKey: 'GET /api/users/{id}' });
    expect(matchRoute('POST', '/api/users')).toEqual({ kind: 'found', routeKey: 'POST /api/users' });
  });

  it('answers method-not-allowed with the allowed methods for a known path', () => {
    expect(matchRoute('DELETE', '/api/users')).toEqual({ kind: 'method-not-allowed', allowed: ['POST'] });
    expect(matchRoute('POST', '/devices')).toEqual({ kind: 'method-not-allowed', allowed: ['GET'] });
  });

  it('answers not-found for unknown paths, deeper paths and empty ids', () => {
    expect(matchRoute('GET', '/nope')).toEqual({ kind: 'not-found' });
    expect(matchRoute('GET', '/api/users/a/b')).toEqual({ kind: 'not-found' });
    expect(matchRoute('GET', '/api/users//')).toEqual({ kind: 'not-found' });
  });
});
