/** POST /credentials body (docs/api.md). */
export interface Credentials {
  client_id: string;
  client_secret: string;
}

export const credentialsSchema = {
  type: 'object',
  required: ['client_id', 'client_secret'],
  additionalProperties: false,
  properties: {
    client_id: { type: 'string', minLength: 1, maxLength: 256 },
    client_secret: { type: 'string', minLength: 1, maxLength: 1024 },
  },
} as const;
