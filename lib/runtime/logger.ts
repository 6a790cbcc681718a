import { Logger } from '@aws-lambda-powertools/logger';

/**
 * One Powertools logger per Lambda. Level and sampling come from the usual POWERTOOLS_* variables,
 * which Powertools reads itself.
 */
export const makeLogger = (serviceName: string): Logger => new Logger({ serviceName });
