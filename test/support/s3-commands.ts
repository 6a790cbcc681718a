import type { S3Client } from '@aws-sdk/client-s3';

/** Records the name of every command the client really sends (a middleware, so nothing is mocked). */
export const recordCommands = (client: S3Client): string[] => {
  const names: string[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      names.push(String(context.commandName));
      return next(args);
    },
    { step: 'initialize', name: 'recordCommandNames' },
  );
  return names;
};
