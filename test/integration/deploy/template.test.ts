import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IDEMPOTENCY_TABLE_KEY } from '../../../lib/http/idempotency-store.ts';
import { bundleFunctions } from '../../../scripts/bundle-functions.ts';
import {
  conditionHolds,
  packageService,
  refText,
  resolveConditions,
  resourcesOfType,
  roleGrants,
  zipEntries,
  zipEntryContent,
  type CfnTemplate,
  type CfnValue,
  type Grant,
  type PackagedService,
} from '../../support/cloudformation.ts';
import { apiRouteKeys } from '../../support/api-routes.ts';

const FUNCTIONS = {
  credentials: { logicalId: 'Credentials', file: 'credentials' },
  devices: { logicalId: 'Devices', file: 'devices' },
  mobileDevices: { logicalId: 'MobileDevices', file: 'mobile-devices' },
  refreshDevices: { logicalId: 'RefreshDevices', file: 'refresh-devices' },
  createUser: { logicalId: 'CreateUser', file: 'create-user' },
  getUser: { logicalId: 'GetUser', file: 'get-user' },
  importTickets: { logicalId: 'ImportTickets', file: 'import-tickets' },
} as const;
type FunctionName = keyof typeof FUNCTIONS;
const FUNCTION_NAMES = Object.keys(FUNCTIONS) as FunctionName[];
/** The functions that read the inventory and share its cache: the same secrets, the same VPC. */
const DEVICES_FUNCTIONS = ['devices', 'mobileDevices', 'refreshDevices'] as const satisfies readonly FunctionName[];

/** A stage with every optional part switched on (an existing cluster, reached in its VPC). */
const FULL_PARAMS = {
  jwtIssuerUrl: 'https://login.example.com/tenant-1/v2.0',
  jwtAudience: 'api://device-users-import',
  inventoryUrl: 'https://acme.jamfcloud.com',
  inventoryClientId: 'jamf-client',
  inventoryClientSecretSsm: '/dui/test/inventory-client-secret',
  inventoryUsername: 'jamf-reader',
  inventoryPasswordSsm: '/dui/test/inventory-password',
  latestIosFeedUrl: 'https://sofa.example.com/v2/ios_data_feed.json',
  latestTvosFeedUrl: 'https://sofa.example.com/v2/tvos_data_feed.json',
  patchSlaExploitedDays: '7',
  ticketingUrl: 'https://acme.zendesk.example',
  ticketingUsername: 'importer@acme.example',
  ticketingPasswordSsm: '/dui/test/ticketing-password',
  secretsKmsKeyArn: 'arn:aws:kms:eu-west-1:123456789012:key/0b1c2d3e-0000-4000-8000-000000000001',
  cache: 'existing',
  redisUrl: 'rediss://devices-cache.abc123.euw1.cache.amazonaws.com:6379',
  redisCluster: 'on',
  redisPasswordSsm: '/dui/test/redis-password',
  devicesSecurityGroupIds: 'sg-0aaa1111bbbb2222c,sg-0bbb2222cccc3333d',
  devicesSubnetIds: 'subnet-0a1b2c3d4e5f60718,subnet-1a2b3c4d5e6f70819,subnet-2a3b4c5d6e7f8091a',
  importBucketName: 'acme-ticket-imports-test',
  importSchedule: 'rate(6 hours)',
  importScheduleEnabled: 'true',
  importSource: 's3://acme-ticket-imports-test/incoming/chat.csv',
  importDestination: 's3://acme-ticket-imports-test/archives/tickets.tar',
  importMemoryMb: '3538',
  logRetentionDays: '14',
  alarmEmail: 'ops@acme.example',
};

const ENI_ACTIONS = new Set([
  'ec2:CreateNetworkInterface',
  'ec2:DescribeNetworkInterfaces',
  'ec2:DescribeSubnets',
  'ec2:DeleteNetworkInterface',
  'ec2:AssignPrivateIpAddresses',
  'ec2:UnassignPrivateIpAddresses',
]);
const FAILURE_QUEUE_GRANT = 'sqs:SendMessage on ScheduledRunFailuresQueue.Arn';
const SSM_ARN = (name: string) => `arn:\${AWS::Partition}:ssm:\${AWS::Region}:\${AWS::AccountId}:parameter${name}`;

const lambdaOf = (template: CfnTemplate, name: FunctionName) => {
  const resource = template.Resources[`${FUNCTIONS[name].logicalId}LambdaFunction`];
  if (resource?.Type !== 'AWS::Lambda::Function') throw new Error(`no Lambda function for ${name}`);
  return resource;
};

const environmentOf = (template: CfnTemplate, name: FunctionName): Record<string, unknown> =>
  (lambdaOf(template, name).Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};

const roleIdOf = (template: CfnTemplate, name: FunctionName): string => {
  const role = lambdaOf(template, name).Properties?.Role;
  expect(refText(role)).toMatch(/^\w+\.Arn$/);
  return refText(role).replace(/\.Arn$/, '');
};

const grantsOf = (template: CfnTemplate, name: FunctionName): Grant[] => roleGrants(template, roleIdOf(template, name));
/** `action on resource` lines, sorted, so a whole role reads (and diffs) at a glance. */
const grantLines = (grants: Grant[]): string[] => grants.map((grant) => `${grant.action} on ${grant.resource}`).sort();
const logGrants = (name: FunctionName): string[] =>
  ['logs:CreateLogStream', 'logs:PutLogEvents'].map((action) => `${action} on ${FUNCTIONS[name].logicalId}LogGroup.Arn`);

describe('osls package: the CloudFormation template', () => {
  let byDefault: PackagedService;
  let full: PackagedService;

  beforeAll(async () => {
    // One package per parameter set, one after the other (the machine is shared).
    byDefault = await packageService({});
    full = await packageService(FULL_PARAMS);
  }, 300_000);

  afterAll(async () => {
    await byDefault?.cleanup();
    await full?.cleanup();
  });

  describe('functions and bundles', () => {
    it('declares exactly the seven functions, each nodejs24.x on arm64, without source maps parsed at load', () => {
      const functions = resourcesOfType(byDefault.template, 'AWS::Lambda::Function');
      expect(functions.map(([, resource]) => resource.Properties?.FunctionName).sort()).toEqual(
        FUNCTION_NAMES.map((name) => `device-users-import-test-${name}`).sort(),
      );
      for (const name of FUNCTION_NAMES) {
        const properties = lambdaOf(byDefault.template, name).Properties!;
        expect(properties.Runtime, name).toBe('nodejs24.x');
        expect(properties.Architectures, name).toEqual(['arm64']);
        expect(properties.Handler, name).toBe(`functions/${FUNCTIONS[name].file}.handler`);
        expect(environmentOf(byDefault.template, name).NODE_OPTIONS, name).toBe(
          name === 'importTickets' ? '--max-semi-space-size=8' : undefined,
        );
        expect(environmentOf(byDefault.template, name).MALLOC_MMAP_THRESHOLD_, name).toBe(name === 'importTickets' ? '131072' : undefined);
      }
    });

    it('packages each function as one minified ESM bundle with its source map and its own chunks, nothing else', async () => {
      for (const name of FUNCTION_NAMES) {
        const entries = await zipEntries(join(byDefault.artifactsDir, `${name}.zip`));
        const file = `functions/${FUNCTIONS[name].file}.mjs`;
        const names = entries.map((entry) => entry.name);
        const chunks = names.filter((entry) => entry !== file && entry !== `${file}.map`);
        expect(names, name).toEqual(expect.arrayContaining([file, `${file}.map`]));
        for (const chunk of chunks)
          expect(chunk, name).toMatch(new RegExp(`^functions/chunks/${FUNCTIONS[name].file}/[\\w-]+\\.mjs(\\.map)?$`));
        // Every chunk the bundle imports is in the zip, with its map.
        const code = (await zipEntryContent(join(byDefault.artifactsDir, `${name}.zip`), file)).toString('utf8');
        for (const imported of code.matchAll(/["']\.\/(chunks\/[^"']+\.mjs)["']/g)) {
          expect(names, `${name} imports ${imported[1]}`).toContain(`functions/${imported[1]}`);
          expect(names).toContain(`functions/${imported[1]}.map`);
        }
        expect(entries.find((entry) => entry.name === file)!.size, `${name} bundle size`).toBeLessThan(1024 * 1024);
      }
    });

    it('bundles for deployment byte for byte what `npm run build` bundles (one set of esbuild options)', async () => {
      // One level below the service, as `npm run build`'s dist/ and serverless-esbuild's .esbuild/.build:
      // a chunk's name hashes its source map, whose paths are relative to where it is written.
      const outDir = join(byDefault.serviceDir, 'dist');
      try {
        const built = await bundleFunctions(byDefault.serviceDir, outDir);
        expect(built.map((report) => report.name).sort()).toEqual([...FUNCTION_NAMES].sort());
        for (const report of built) {
          const name = report.name as FunctionName;
          const deployed = await zipEntryContent(join(byDefault.artifactsDir, `${name}.zip`), `functions/${FUNCTIONS[name].file}.mjs`);
          expect(deployed.equals(await readFile(report.file)), name).toBe(true);
        }
      } finally {
        await rm(outDir, { recursive: true, force: true });
      }
    });

    it('gives every function and the API access log a log group with the configured retention', () => {
      for (const [template, days] of [
        [byDefault.template, 30],
        [full.template, 14],
      ] as const) {
        const groups = resourcesOfType(template, 'AWS::Logs::LogGroup');
        expect(groups.map(([id]) => id).sort()).toEqual(
          [...FUNCTION_NAMES.map((name) => `${FUNCTIONS[name].logicalId}LogGroup`), 'HttpApiLogGroup'].sort(),
        );
        for (const [id, group] of groups) expect(group.Properties?.RetentionInDays, id).toBe(days);
      }
      const stage = full.template.Resources.HttpApiStage?.Properties as
        { AccessLogSettings?: { DestinationArn: CfnValue; Format: string } } | undefined;
      expect(refText(stage?.AccessLogSettings?.DestinationArn)).toBe('HttpApiLogGroup.Arn');
      // One JSON object a line, saying also why API Gateway itself refused a request (the authorizer's reason).
      // The error message comes already quoted (`messageString`), so the line stays JSON whatever it holds.
      const format = stage!.AccessLogSettings!.Format;
      expect(format).toContain('"error":$context.error.messageString,');
      expect(JSON.parse(format.replace('$context.error.messageString', '"quoted by API Gateway"'))).toMatchObject({
        status: '$context.status',
        routeKey: '$context.routeKey',
        error: 'quoted by API Gateway',
        authorizerError: '$context.authorizer.error',
        integrationError: '$context.integrationErrorMessage',
      });
    });
  });

  describe('HTTP API', () => {
    const routes = (template: CfnTemplate) => resourcesOfType(template, 'AWS::ApiGatewayV2::Route').map(([, route]) => route.Properties!);
    const integrationFunction = (template: CfnTemplate, target: CfnValue | undefined): string => {
      // Target: { Fn::Join: ['/', ['integrations', { Ref: <integration> }]] }
      const [, parts] = (target as { 'Fn::Join': [string, CfnValue[]] })['Fn::Join'];
      const integrationId = refText(parts[1]);
      return refText(template.Resources[integrationId]?.Properties?.IntegrationUri).replace(/LambdaFunction\.Arn$/, '');
    };

    it('routes exactly the API of lib/http/routes.ts plus the $default catch-all, each to its function', () => {
      const expected: Record<string, string> = {
        'POST /credentials': 'Credentials',
        'GET /devices': 'Devices',
        'GET /devices/summary': 'Devices',
        'GET /mobile-devices': 'MobileDevices',
        'GET /mobile-devices/summary': 'MobileDevices',
        'POST /api/users': 'CreateUser',
        'GET /api/users/{id}': 'GetUser',
        $default: 'Credentials',
      };
      expect(
        Object.keys(expected)
          .filter((key) => key !== '$default')
          .sort(),
      ).toEqual(apiRouteKeys().sort());
      const actual = Object.fromEntries(
        routes(byDefault.template).map((route) => [String(route.RouteKey), integrationFunction(byDefault.template, route.Target)]),
      );
      expect(actual).toEqual(expected);
    });

    it('guards every route, $default included, with the one JWT authorizer', () => {
      const authorizers = resourcesOfType(full.template, 'AWS::ApiGatewayV2::Authorizer');
      expect(authorizers).toHaveLength(1);
      const [authorizerId, authorizer] = authorizers[0]!;
      expect(authorizer.Properties).toMatchObject({
        AuthorizerType: 'JWT',
        IdentitySource: ['$request.header.Authorization'],
        JwtConfiguration: { Issuer: FULL_PARAMS.jwtIssuerUrl, Audience: [FULL_PARAMS.jwtAudience] },
      });
      const all = routes(full.template);
      expect(all).toHaveLength(apiRouteKeys().length + 1);
      for (const route of all) {
        expect(route.AuthorizationType, String(route.RouteKey)).toBe('JWT');
        expect(refText(route.AuthorizerId), String(route.RouteKey)).toBe(authorizerId);
      }
    });

    it('fails closed by default: the placeholder issuer is an https URL on a reserved, unresolvable domain', () => {
      const [authorizer] = resourcesOfType(byDefault.template, 'AWS::ApiGatewayV2::Authorizer');
      const issuer = new URL(String((authorizer?.[1].Properties?.JwtConfiguration as { Issuer?: string } | undefined)?.Issuer));
      expect(issuer.protocol).toBe('https:');
      expect(issuer.hostname).toMatch(/\.invalid$/);
    });
  });

  interface RuleProperties {
    ScheduleExpression: string;
    State: CfnValue;
    Targets: Array<{ Arn: unknown; Input?: string }>;
  }
  /** The schedule rule that invokes `logicalId`'s function. */
  const ruleFor = (template: CfnTemplate, logicalId: string): RuleProperties => {
    const rules = resourcesOfType(template, 'AWS::Events::Rule').filter(([, rule]) =>
      ((rule.Properties as unknown as RuleProperties).Targets ?? []).some(
        (target) => refText(target.Arn as never) === `${logicalId}LambdaFunction.Arn`,
      ),
    );
    expect(rules).toHaveLength(1);
    return rules[0]![1].Properties as unknown as RuleProperties;
  };

  describe('import schedule', () => {
    const ruleOf = (template: CfnTemplate) => ruleFor(template, 'ImportTickets');

    it('invokes importTickets on the configured rate with {source, destination} when enabled', () => {
      const rule = ruleOf(full.template);
      expect(rule.ScheduleExpression).toBe('rate(6 hours)');
      expect(rule.State).toBe('ENABLED');
      expect(rule.Targets).toHaveLength(1);
      expect(refText(rule.Targets[0]!.Arn as never)).toBe('ImportTicketsLambdaFunction.Arn');
      expect(JSON.parse(rule.Targets[0]!.Input!)).toEqual({ source: FULL_PARAMS.importSource, destination: FULL_PARAMS.importDestination });
    });

    it('does not retry a failed scheduled run of either scheduled function (the next scheduled run is the retry)', () => {
      const configs = resourcesOfType(full.template, 'AWS::Lambda::EventInvokeConfig').map(([, config]) => config.Properties);
      expect(configs).toHaveLength(2);
      expect(configs).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ FunctionName: { Ref: 'ImportTicketsLambdaFunction' }, MaximumRetryAttempts: 0 }),
          expect.objectContaining({ FunctionName: { Ref: 'RefreshDevicesLambdaFunction' }, MaximumRetryAttempts: 0 }),
        ]),
      );
    });

    it('drops an asynchronous import event held back for more than an hour (to the failure queue), rather than running it late', () => {
      for (const template of [byDefault.template, full.template]) {
        const config = resourcesOfType(template, 'AWS::Lambda::EventInvokeConfig')
          .map(([, resource]) => resource.Properties)
          .find((properties) => refText(properties?.FunctionName as never) === 'ImportTicketsLambdaFunction');
        expect(config).toMatchObject({ MaximumEventAgeInSeconds: 3600, MaximumRetryAttempts: 0 });
      }
    });

    it('calls the import missing when no run succeeded within the rate plus an hour, hour by hour', () => {
      // rate(6 hours): seven hours, each without ImportSucceeded.
      expect(full.template.Resources.ImportMissingAlarm?.Properties).toMatchObject({
        MetricName: 'ImportSucceeded',
        Period: 3600,
        EvaluationPeriods: 7,
        DatapointsToAlarm: 7,
        TreatMissingData: 'breaching',
      });
      expect(full.template.Resources.ImportMissingAlarm?.Condition).toBe('ImportScheduled');
      expect([conditionHolds(full.template, 'ImportScheduled'), conditionHolds(byDefault.template, 'ImportScheduled')]).toEqual([
        true,
        false,
      ]);
    });

    it('is created disabled, on a daily rate, when the stage configures no import', () => {
      expect(ruleOf(byDefault.template)).toMatchObject({ ScheduleExpression: 'rate(1 day)', State: 'DISABLED' });
    });
  });

  describe('device refresh schedule', () => {
    it('refreshes every minute by default, and the rate is a stage parameter', () => {
      expect(ruleFor(byDefault.template, 'RefreshDevices').ScheduleExpression).toBe('rate(1 minute)');
    });

    it('runs only where a cluster is configured, unless switched off', async () => {
      expect(resolveConditions(byDefault.template, ruleFor(byDefault.template, 'RefreshDevices').State)).toBe('DISABLED');
      expect(resolveConditions(full.template, ruleFor(full.template, 'RefreshDevices').State)).toBe('ENABLED');
      const off = await packageService({ ...FULL_PARAMS, devicesRefreshEnabled: 'false' });
      try {
        expect(resolveConditions(off.template, ruleFor(off.template, 'RefreshDevices').State)).toBe('DISABLED');
      } finally {
        await off.cleanup();
      }
    }, 300_000);

    it("gives the refresh the devices function's inventory and cache configuration (not the latest-OS reference), how often it reads in full, and its 15 minutes", () => {
      const {
        LATEST_OS_VERSION: _version,
        LATEST_OS_FEED_URL: _feed,
        LATEST_OS_FEED_TTL_SECONDS: _ttl,
        // Service levels decide responses; the refresh stores devices, not decisions.
        PATCH_SLA_EXPLOITED_DAYS: _exploited,
        PATCH_SLA_SECURITY_DAYS: _security,
        PATCH_SLA_DAYS: _other,
        ...inventoryAndCache
      } = environmentOf(full.template, 'devices');
      expect(environmentOf(full.template, 'refreshDevices')).toEqual({ ...inventoryAndCache, DEVICES_FULL_REFRESH_SECONDS: '3600' });
      expect(lambdaOf(full.template, 'refreshDevices').Properties).toMatchObject({ Timeout: 900, MemorySize: 1024 });
    });
  });

  describe('least-privilege IAM, one role per function', () => {
    it('gives each function its own role, trusted by Lambda only, and no shared default role', () => {
      const roles = resourcesOfType(byDefault.template, 'AWS::IAM::Role');
      const used = FUNCTION_NAMES.map((name) => roleIdOf(byDefault.template, name));
      expect(new Set(used).size).toBe(FUNCTION_NAMES.length);
      expect(roles.map(([id]) => id).sort()).toEqual([...used].sort());
      expect(resourcesOfType(byDefault.template, 'AWS::IAM::Policy')).toEqual([]);
      for (const [id, role] of roles) {
        expect(role.Properties?.AssumeRolePolicyDocument, id).toEqual({
          Version: '2012-10-17',
          Statement: [{ Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' }, Action: 'sts:AssumeRole' }],
        });
      }
    });

    it('allows without optional parts only logs, the users table calls and the import bucket object calls', () => {
      const template = byDefault.template;
      expect(grantLines(grantsOf(template, 'credentials'))).toEqual(logGrants('credentials'));
      expect(grantLines(grantsOf(template, 'devices'))).toEqual(logGrants('devices'));
      expect(grantLines(grantsOf(template, 'mobileDevices'))).toEqual(logGrants('mobileDevices'));
      // Lambda sends a failed scheduled run's record to the failure queue with the function's role.
      expect(grantLines(grantsOf(template, 'refreshDevices'))).toEqual([...logGrants('refreshDevices'), FAILURE_QUEUE_GRANT].sort());
      expect(grantLines(grantsOf(template, 'createUser'))).toEqual(
        [
          ...logGrants('createUser'),
          'dynamodb:PutItem on UsersTable.Arn',
          'dynamodb:DeleteItem on UsersTable.Arn',
          'dynamodb:GetItem on UsersTable.Arn',
          ...['PutItem', 'GetItem', 'UpdateItem', 'DeleteItem'].map((action) => `dynamodb:${action} on IdempotencyTable.Arn`),
        ].sort(),
      );
      expect(grantLines(grantsOf(template, 'getUser'))).toEqual([...logGrants('getUser'), 'dynamodb:GetItem on UsersTable.Arn'].sort());
      expect(grantLines(grantsOf(template, 'importTickets'))).toEqual(
        [
          ...logGrants('importTickets'),
          // Reads exports under the input prefix; writes, looks at and deletes versions of its own
          // archives under the archive prefix only; never a bare delete (a delete marker).
          's3:GetObject on ${ImportBucket.Arn}/incoming/*',
          ...['s3:GetObject', 's3:PutObject', 's3:AbortMultipartUpload', 's3:DeleteObjectVersion'].map(
            (action) => `${action} on \${ImportBucket.Arn}/archives/*`,
          ),
          FAILURE_QUEUE_GRANT,
        ].sort(),
      );
    });

    it("adds exactly the named SSM parameters (the Redis password's too), the KMS key via SSM only, and ENI rights for the devices functions in a VPC", () => {
      const template = full.template;
      expect(grantLines(grantsOf(template, 'credentials'))).toEqual(logGrants('credentials'));
      expect(grantLines(grantsOf(template, 'getUser'))).toEqual([...logGrants('getUser'), 'dynamodb:GetItem on UsersTable.Arn'].sort());
      for (const name of DEVICES_FUNCTIONS) {
        expect(grantLines(grantsOf(template, name)), name).toEqual(
          [
            ...logGrants(name),
            `ssm:GetParameter on ${SSM_ARN(FULL_PARAMS.inventoryClientSecretSsm)}`,
            `ssm:GetParameter on ${SSM_ARN(FULL_PARAMS.inventoryPasswordSsm)}`,
            `ssm:GetParameter on ${SSM_ARN(FULL_PARAMS.redisPasswordSsm)}`,
            `kms:Decrypt on ${FULL_PARAMS.secretsKmsKeyArn}`,
            ...[...ENI_ACTIONS].map((action) => `${action} on *`),
            ...(name === 'refreshDevices' ? [FAILURE_QUEUE_GRANT] : []),
          ].sort(),
        );
      }
      const importLines = grantLines(grantsOf(template, 'importTickets'));
      expect(importLines).toContain(`ssm:GetParameter on ${SSM_ARN(FULL_PARAMS.ticketingPasswordSsm)}`);
      expect(importLines).toContain(`kms:Decrypt on ${FULL_PARAMS.secretsKmsKeyArn}`);
      expect(importLines.filter((line) => line.startsWith('ssm:'))).toHaveLength(1);
      for (const name of [...DEVICES_FUNCTIONS, 'importTickets'] as const) {
        const decrypt = grantsOf(template, name).find((grant) => grant.action === 'kms:Decrypt');
        expect(decrypt?.condition, name).toEqual({ StringEquals: { 'kms:ViaService': { 'Fn::Sub': 'ssm.${AWS::Region}.amazonaws.com' } } });
      }
    });

    it('allows exactly the DynamoDB and S3 calls the code makes (lib/users, lib/storage)', async () => {
      // SDK command → the IAM action that authorizes it. A new command fails here until mapped (and granted).
      const IAM_ACTION: Record<string, string[]> = {
        PutCommand: ['dynamodb:PutItem'],
        GetCommand: ['dynamodb:GetItem'],
        DeleteCommand: ['dynamodb:DeleteItem'],
        UpdateCommand: ['dynamodb:UpdateItem'],
        PutItemCommand: ['dynamodb:PutItem'],
        GetItemCommand: ['dynamodb:GetItem'],
        DeleteItemCommand: ['dynamodb:DeleteItem'],
        UpdateItemCommand: ['dynamodb:UpdateItem'],
        GetObjectCommand: ['s3:GetObject'],
        HeadObjectCommand: ['s3:GetObject'],
        // The clean-up deletes the VersionId its upload completed with (s3:DeleteObjectVersion). A bare
        // delete, for an unversioned bucket only, is not granted: the stack's bucket is versioned, and
        // there a bare delete would lay a delete marker over the previous archive.
        DeleteObjectCommand: ['s3:DeleteObjectVersion'],
        PutObjectCommand: ['s3:PutObject'],
        // A multipart upload's calls are all authorized by s3:PutObject, but its abort.
        CreateMultipartUploadCommand: ['s3:PutObject'],
        UploadPartCommand: ['s3:PutObject'],
        CompleteMultipartUploadCommand: ['s3:PutObject'],
        AbortMultipartUploadCommand: ['s3:AbortMultipartUpload'],
      };
      const calledActions = async (dir: string): Promise<string[]> => {
        const files = (await readdir(join(byDefault.serviceDir, dir), { recursive: true })).filter((file) => /\.[jt]s$/.test(file));
        const commands = new Set<string>();
        for (const file of files) {
          const source = await readFile(join(byDefault.serviceDir, dir, file), 'utf8');
          for (const match of source.matchAll(/new (\w+Command)\(/g)) commands.add(match[1]!);
        }
        return [...commands].flatMap((command) => {
          const actions = IAM_ACTION[command];
          if (!actions) throw new Error(`${dir} calls ${command}: map it to its IAM action here and grant it in infra/iam.yml`);
          return actions;
        });
      };
      const granted = (names: FunctionName[], service: string, resource?: string) =>
        [
          ...new Set(
            names
              .flatMap((name) => grantsOf(full.template, name))
              .filter((grant) => resource === undefined || grant.resource === resource)
              .map((grant) => grant.action)
              .filter((action) => action.startsWith(service)),
          ),
        ].sort();
      expect(granted(['createUser', 'getUser'], 'dynamodb:', 'UsersTable.Arn')).toEqual(
        [...new Set(await calledActions('lib/users'))].sort(),
      );
      // The idempotency records are written by Powertools' DynamoDB persistence layer, not by lib/ itself.
      expect(granted(['createUser'], 'dynamodb:', 'IdempotencyTable.Arn')).toEqual(
        [...new Set(await calledActions('node_modules/@aws-lambda-powertools/idempotency/lib/esm/persistence'))].sort(),
      );
      expect(granted(['createUser', 'getUser'], 'dynamodb:').length).toBe(
        granted(['createUser'], 'dynamodb:', 'IdempotencyTable.Arn').length,
      );
      expect(granted(['importTickets'], 's3:')).toEqual([...new Set(await calledActions('lib/storage'))].sort());
      expect(
        granted(['credentials', ...DEVICES_FUNCTIONS], 'dynamodb:').concat(
          granted(['credentials', ...DEVICES_FUNCTIONS, 'createUser', 'getUser'], 's3:'),
        ),
      ).toEqual([]);
    });

    it("never grants a wildcard action, a wildcard resource for data, or another function's log group", () => {
      for (const template of [byDefault.template, full.template]) {
        for (const name of FUNCTION_NAMES) {
          for (const grant of grantsOf(template, name)) {
            expect(grant.action, name).not.toContain('*');
            if (grant.resource === '*' || grant.resource.endsWith(':*') || grant.resource.endsWith(':parameter')) {
              expect(ENI_ACTIONS.has(grant.action), `${name}: ${grant.action} on ${grant.resource}`).toBe(true);
            }
            if (grant.action.startsWith('logs:')) expect(grant.resource, name).toBe(`${FUNCTIONS[name].logicalId}LogGroup.Arn`);
          }
        }
      }
    });
  });

  describe('optional VPC for the devices functions', () => {
    it('has no VPC at all when no security group or subnet is configured', () => {
      expect(conditionHolds(byDefault.template, 'DevicesInVpc')).toBe(false);
      for (const name of FUNCTION_NAMES) {
        expect(resolveConditions(byDefault.template, lambdaOf(byDefault.template, name).Properties?.VpcConfig), name).toBeUndefined();
      }
    });

    it('joins the configured subnets and security groups when given, and only the devices functions do', () => {
      for (const name of DEVICES_FUNCTIONS) {
        expect(resolveConditions(full.template, lambdaOf(full.template, name).Properties?.VpcConfig), name).toEqual({
          SecurityGroupIds: { 'Fn::Split': [',', FULL_PARAMS.devicesSecurityGroupIds] },
          SubnetIds: { 'Fn::Split': [',', FULL_PARAMS.devicesSubnetIds] },
        });
      }
      for (const name of FUNCTION_NAMES.filter((fn) => !(DEVICES_FUNCTIONS as readonly string[]).includes(fn))) {
        expect(lambdaOf(full.template, name).Properties?.VpcConfig, name).toBeUndefined();
      }
    });
  });

  describe('configuration and secrets', () => {
    const CONFIGURATION_VARIABLES: Record<FunctionName, string[]> = {
      credentials: [],
      devices: [
        'INVENTORY_URL',
        'INVENTORY_CLIENT_ID',
        'INVENTORY_CLIENT_SECRET_SSM',
        'INVENTORY_USERNAME',
        'INVENTORY_PASSWORD_SSM',
        'LATEST_OS_VERSION',
        'LATEST_OS_FEED_URL',
        'LATEST_OS_FEED_TTL_SECONDS',
        'PATCH_SLA_EXPLOITED_DAYS',
        'PATCH_SLA_SECURITY_DAYS',
        'PATCH_SLA_DAYS',
        'DEVICES_CACHE_TTL_SECONDS',
        'DEVICES_CACHE_STALE_SECONDS',
        'REDIS_URL',
        'REDIS_CLUSTER',
        'REDIS_PASSWORD_SSM',
      ],
      // The devices function's inventory, cache and service levels, the iOS and tvOS references instead of the macOS one.
      mobileDevices: [
        'INVENTORY_URL',
        'INVENTORY_CLIENT_ID',
        'INVENTORY_CLIENT_SECRET_SSM',
        'INVENTORY_USERNAME',
        'INVENTORY_PASSWORD_SSM',
        'LATEST_IOS_VERSION',
        'LATEST_IOS_FEED_URL',
        'LATEST_TVOS_VERSION',
        'LATEST_TVOS_FEED_URL',
        'LATEST_OS_FEED_TTL_SECONDS',
        'PATCH_SLA_EXPLOITED_DAYS',
        'PATCH_SLA_SECURITY_DAYS',
        'PATCH_SLA_DAYS',
        'DEVICES_CACHE_TTL_SECONDS',
        'DEVICES_CACHE_STALE_SECONDS',
        'REDIS_URL',
        'REDIS_CLUSTER',
        'REDIS_PASSWORD_SSM',
      ],
      // The refresh stores devices, not decisions: no latest-OS reference.
      refreshDevices: [
        'INVENTORY_URL',
        'INVENTORY_CLIENT_ID',
        'INVENTORY_CLIENT_SECRET_SSM',
        'INVENTORY_USERNAME',
        'INVENTORY_PASSWORD_SSM',
        'DEVICES_CACHE_TTL_SECONDS',
        'DEVICES_CACHE_STALE_SECONDS',
        'DEVICES_FULL_REFRESH_SECONDS',
        'REDIS_URL',
        'REDIS_CLUSTER',
        'REDIS_PASSWORD_SSM',
      ],
      createUser: ['USERS_TABLE', 'USER_EMAIL_PATTERN', 'IDEMPOTENCY_TABLE'],
      getUser: ['USERS_TABLE'],
      importTickets: [
        'NODE_OPTIONS',
        'MALLOC_MMAP_THRESHOLD_',
        'TICKETING_URL',
        'TICKETING_USERNAME',
        'TICKETING_PASSWORD_SSM',
        'TICKETING_PAGINATION',
        'IMPORT_BUCKET',
        'IMPORT_INPUT_PREFIX',
        'IMPORT_ARCHIVE_PREFIX',
        'IMPORT_BUCKET_OWNER',
      ],
    };
    const RUNTIME_VARIABLES = ['POWERTOOLS_METRICS_NAMESPACE'];

    it('sets each function exactly its configuration variables, from the stage parameters', () => {
      for (const name of FUNCTION_NAMES) {
        expect(Object.keys(environmentOf(full.template, name)).sort(), name).toEqual(
          [...RUNTIME_VARIABLES, ...CONFIGURATION_VARIABLES[name]].sort(),
        );
      }
      expect(environmentOf(full.template, 'devices')).toMatchObject({
        INVENTORY_URL: FULL_PARAMS.inventoryUrl,
        INVENTORY_CLIENT_SECRET_SSM: FULL_PARAMS.inventoryClientSecretSsm,
        REDIS_URL: FULL_PARAMS.redisUrl,
        REDIS_CLUSTER: 'on',
        REDIS_PASSWORD_SSM: FULL_PARAMS.redisPasswordSsm,
        LATEST_OS_VERSION: '26.1',
        LATEST_OS_FEED_TTL_SECONDS: '3600',
        PATCH_SLA_EXPLOITED_DAYS: '7',
        PATCH_SLA_SECURITY_DAYS: '21',
        PATCH_SLA_DAYS: '28',
        DEVICES_CACHE_TTL_SECONDS: '60',
      });
      expect(environmentOf(full.template, 'importTickets').TICKETING_PASSWORD_SSM).toBe(FULL_PARAMS.ticketingPasswordSsm);
      expect(environmentOf(full.template, 'importTickets').TICKETING_PAGINATION).toBe('pages');
      // The fences: the stack's own bucket, the two prefixes, and this account as the bucket's owner.
      const importEnvironment = environmentOf(full.template, 'importTickets');
      expect(refText(importEnvironment.IMPORT_BUCKET as never)).toBe('ImportBucket');
      expect(refText(importEnvironment.IMPORT_BUCKET_OWNER as never)).toBe('AWS::AccountId');
      expect([importEnvironment.IMPORT_INPUT_PREFIX, importEnvironment.IMPORT_ARCHIVE_PREFIX]).toEqual(['incoming/', 'archives/']);
      expect(refText(environmentOf(full.template, 'createUser').USERS_TABLE as never)).toBe('UsersTable');
      expect(refText(environmentOf(full.template, 'createUser').IDEMPOTENCY_TABLE as never)).toBe('IdempotencyTable');
      expect(refText(environmentOf(full.template, 'getUser').USERS_TABLE as never)).toBe('UsersTable');
    });

    it("gives mobileDevices the devices function's inventory and cache configuration, the iOS reference in place of the macOS one, and its memory and time", () => {
      const { LATEST_OS_VERSION: _version, LATEST_OS_FEED_URL: _feed, ...inventoryAndCache } = environmentOf(full.template, 'devices');
      expect(environmentOf(full.template, 'mobileDevices')).toEqual({
        ...inventoryAndCache,
        LATEST_IOS_VERSION: '26.6.1',
        LATEST_IOS_FEED_URL: FULL_PARAMS.latestIosFeedUrl,
        LATEST_TVOS_VERSION: '',
        LATEST_TVOS_FEED_URL: FULL_PARAMS.latestTvosFeedUrl,
      });
      expect(environmentOf(byDefault.template, 'mobileDevices')).toMatchObject({
        LATEST_IOS_VERSION: '26.6.1',
        LATEST_IOS_FEED_URL: '',
        LATEST_TVOS_VERSION: '',
        LATEST_TVOS_FEED_URL: '',
        PATCH_SLA_EXPLOITED_DAYS: '14',
        PATCH_SLA_SECURITY_DAYS: '21',
        PATCH_SLA_DAYS: '28',
      });
      const { MemorySize, Timeout } = lambdaOf(full.template, 'devices').Properties!;
      expect([MemorySize, Timeout]).toEqual([512, 29]);
      expect(lambdaOf(full.template, 'mobileDevices').Properties).toMatchObject({ MemorySize, Timeout });
    });

    it('holds no plain secret: secrets only as SSM parameter names, no credentials inside URLs', () => {
      for (const template of [byDefault.template, full.template]) {
        for (const name of FUNCTION_NAMES) {
          for (const [variable, value] of Object.entries(environmentOf(template, name))) {
            if (/SECRET|PASSWORD|TOKEN|PRIVATE|API_KEY/.test(variable)) {
              expect(variable, `${name}.${variable}`).toMatch(/_SSM$/);
              expect(String(value), `${name}.${variable}`).toMatch(/^(|\/[\w./-]+)$/);
            }
            if (typeof value === 'string' && /^[a-z]+:\/\//.test(value)) {
              const url = new URL(value);
              expect(url.username + url.password, `${name}.${variable} carries credentials`).toBe('');
            }
          }
        }
      }
    });
  });

  describe('data resources', () => {
    it('keeps the users table with point-in-time recovery, encrypted, retained on stack deletion and protected from deletion', () => {
      const table = byDefault.template.Resources.UsersTable!;
      expect(table.Type).toBe('AWS::DynamoDB::Table');
      expect(table.Properties?.DeletionProtectionEnabled).toBe(true);
      expect(table.Properties?.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
      expect(table.Properties?.SSESpecification).toEqual({ SSEEnabled: true });
      expect([table.DeletionPolicy, table.UpdateReplacePolicy]).toEqual(['Retain', 'Retain']);
    });

    it('keeps idempotency records in a table of their own: keyed and expiring on the attributes the code writes, point-in-time recovery, encrypted', () => {
      const table = byDefault.template.Resources.IdempotencyTable!;
      expect(table.Type).toBe('AWS::DynamoDB::Table');
      expect(table.Properties).toMatchObject({
        BillingMode: 'PAY_PER_REQUEST',
        KeySchema: [{ AttributeName: IDEMPOTENCY_TABLE_KEY, KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: IDEMPOTENCY_TABLE_KEY, AttributeType: 'S' }],
        // The attribute the store writes each outcome's expiry on (docs/configuration.md; checked
        // against what it writes in test/integration/users/idempotency.test.ts).
        TimeToLiveSpecification: { AttributeName: 'expiration', Enabled: true },
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        SSESpecification: { SSEEnabled: true },
      });
    });

    it('blocks every kind of public access to the import bucket, encrypts it, versions it, refuses plain HTTP and keeps it on stack deletion', () => {
      const bucket = byDefault.template.Resources.ImportBucket!;
      expect([bucket.DeletionPolicy, bucket.UpdateReplacePolicy]).toEqual(['Retain', 'Retain']);
      expect(bucket.Properties?.VersioningConfiguration).toEqual({ Status: 'Enabled' });
      expect(bucket.Properties?.PublicAccessBlockConfiguration).toEqual({
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      });
      expect(JSON.stringify(bucket.Properties?.BucketEncryption)).toContain('SSEAlgorithm');
      const policies = resourcesOfType(byDefault.template, 'AWS::S3::BucketPolicy').filter(
        ([, resource]) => refText(resource.Properties?.Bucket) === 'ImportBucket',
      );
      expect(policies).toHaveLength(1);
      const document = policies[0]![1].Properties?.PolicyDocument as { Statement: CfnValue[] };
      expect(document.Statement).toContainEqual(
        expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': false } } }),
      );
    });

    it('names the import bucket only when a name is configured', () => {
      expect(resolveConditions(byDefault.template, byDefault.template.Resources.ImportBucket!.Properties)).not.toHaveProperty('BucketName');
      expect(resolveConditions(full.template, full.template.Resources.ImportBucket!.Properties)).toHaveProperty(
        'BucketName',
        FULL_PARAMS.importBucketName,
      );
    });
  });
});
