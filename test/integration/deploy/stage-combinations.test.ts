import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  conditionHolds,
  describeFindings,
  failedParameterConstraints,
  lintTemplate,
  packageService,
  refText,
  resolveConditions,
  resourcesOfType,
  roleGrants,
  type CfnResource,
  type CfnTemplate,
  type CfnValue,
  type LintFinding,
} from '../../support/cloudformation.ts';

/**
 * The documented stage combinations (docs/operations.md, docs/configuration.md), each packaged once
 * with `osls package` and checked as an operator would deploy it: what it creates, how the parts
 * reference each other, and that AWS's cfn-lint finds no error in the template.
 */
const KMS_KEY_ARN = 'arn:aws:kms:eu-west-1:123456789012:key/0b1c2d3e-0000-4000-8000-000000000001';
const SUBNETS = 'subnet-0a1b2c3d4e5f60718,subnet-1a2b3c4d5e6f70819';
const COMBINATIONS = {
  /** Nothing set: memory tier only, no VPC, no alarm address. */
  defaults: {},
  /** An existing cluster reached in its VPC, and every other optional part. */
  existing: {
    cache: 'existing',
    redisUrl: 'rediss://devices-cache.abc123.euw1.cache.amazonaws.com:6379',
    devicesSubnetIds: SUBNETS,
    devicesSecurityGroupIds: 'sg-0aaa1111bbbb2222c',
    redisCluster: 'on',
    redisPasswordSsm: '/dui/test/redis-password',
    inventoryUrl: 'https://acme.jamfcloud.com',
    inventoryClientId: 'jamf-client',
    inventoryClientSecretSsm: '/dui/test/inventory-client-secret',
    ticketingUrl: 'https://acme.zendesk.example',
    ticketingUsername: 'importer@acme.example',
    ticketingPasswordSsm: '/dui/test/ticketing-password',
    secretsKmsKeyArn: KMS_KEY_ARN,
    importBucketName: 'acme-ticket-imports-test',
    importInputPrefix: 'exports/',
    importArchivePrefix: 'tickets/archives/',
    importSchedule: 'cron(0 3 * * ? *)',
    importScheduleEnabled: 'true',
    importAlarmHours: '30',
    importSource: 's3://acme-ticket-imports-test/exports/chat.csv',
    importDestination: 's3://acme-ticket-imports-test/tickets/archives/tickets.tar',
    archiveRetentionDays: '45',
    importMemoryMb: '3538',
    apiRateLimit: '20',
    apiBurstLimit: '40',
    alarmEmail: 'ops@acme.example',
  },
  /** The stack's own ElastiCache Serverless cache, with an alarm address. */
  serverless: {
    cache: 'serverless',
    vpcId: 'vpc-0123456789abcdef0',
    devicesSubnetIds: SUBNETS,
    alarmEmail: 'ops@acme.example',
  },
  /** Any valid token on every route. */
  noScopes: { jwtScopes: 'false' },
  /** Half filled: a serverless cache without its VPC. Must be refused before anything is created. */
  serverlessWithoutVpc: { cache: 'serverless', devicesSubnetIds: SUBNETS },
} satisfies Record<string, Record<string, string>>;
type Combination = keyof typeof COMBINATIONS;
const DOCUMENTED: Combination[] = ['defaults', 'existing', 'serverless', 'noScopes'];

interface Packaged {
  template: CfnTemplate;
  /** cfn-lint's findings, or why cfn-lint could not run (reported by the lint test alone). */
  lint: { findings: LintFinding[] } | { error: Error };
}
const packaged = {} as Record<Combination, Packaged>;
const templateOf = (combination: Combination): CfnTemplate => packaged[combination].template;

const FUNCTIONS = ['Credentials', 'Devices', 'MobileDevices', 'RefreshDevices', 'CreateUser', 'GetUser', 'ImportTickets'] as const;
/** The functions that read the inventory and share its cache tier: the same REDIS_URL, VPC and secrets. */
const DEVICES_FUNCTIONS = ['Devices', 'MobileDevices', 'RefreshDevices'] as const;
const SCHEDULED = ['RefreshDevices', 'ImportTickets'] as const;
const propertiesOf = (template: CfnTemplate, logicalId: string): Record<string, CfnValue> => {
  const resource = template.Resources[logicalId];
  if (resource === undefined) throw new Error(`no resource ${logicalId}`);
  return (resolveConditions(template, resource.Properties) ?? {}) as Record<string, CfnValue>;
};
const environmentOf = (template: CfnTemplate, fn: string) =>
  (propertiesOf(template, `${fn}LambdaFunction`).Environment as { Variables: Record<string, CfnValue> }).Variables;
/** Whether CloudFormation creates the resource (its Condition holds, or it has none). */
const created = (template: CfnTemplate, resource: CfnResource): boolean =>
  resource.Condition === undefined || conditionHolds(template, resource.Condition);
const createdOfType = (template: CfnTemplate, type: string) =>
  resourcesOfType(template, type).filter(([, resource]) => created(template, resource));
const grantLines = (template: CfnTemplate, fn: string): string[] => {
  const roleId = refText(template.Resources[`${fn}LambdaFunction`]!.Properties!.Role).replace(/\.Arn$/, '');
  return roleGrants(template, roleId).map((grant) => `${grant.action} on ${grant.resource}`);
};

/** The same text infra/stage-checks.yml builds from the cache stage parameters. */
const cacheSettings = (params: Readonly<Record<string, string | undefined>>) =>
  `cache=${params.cache ?? 'none'};redisUrl=${params.redisUrl ?? ''};vpcId=${params.vpcId ?? ''};` +
  `devicesSubnetIds=${params.devicesSubnetIds ?? ''};devicesSecurityGroupIds=${params.devicesSecurityGroupIds ?? ''}`;

describe('osls package: the documented stage combinations', () => {
  beforeAll(async () => {
    // One package per combination, one after the other (the machine is shared); cfn-lint on each
    // packaged template before its folder goes.
    for (const [combination, params] of Object.entries(COMBINATIONS) as Array<[Combination, Record<string, string>]>) {
      const service = await packageService(params);
      try {
        const lint = await lintTemplate(join(service.artifactsDir, 'cloudformation-template-update-stack.json')).then(
          (findings) => ({ findings }),
          (error: unknown) => ({ error: error instanceof Error ? error : new Error(String(error)) }),
        );
        packaged[combination] = { template: service.template, lint };
      } finally {
        await service.cleanup();
      }
    }
  }, 600_000);

  describe('what CloudFormation and cfn-lint accept', () => {
    it.each(DOCUMENTED)('%s: cfn-lint (v1) finds no error-level problem in the packaged template', (combination) => {
      const { lint } = packaged[combination];
      // Without cfn-lint this fails, saying it is required: it never passes unchecked.
      if ('error' in lint) throw lint.error;
      const errors = lint.findings.filter((finding) => finding.Level === 'Error');
      expect(errors, `cfn-lint errors:\n${describeFindings(errors)}`).toEqual([]);
    });

    it.each(DOCUMENTED)('%s: passes every stage check (CloudFormation takes the parameters as they are)', (combination) => {
      expect(failedParameterConstraints(templateOf(combination))).toEqual([]);
      expect(templateOf(combination).Parameters?.CacheStageParameters?.Default).toBe(cacheSettings(COMBINATIONS[combination]));
    });

    it('refuses a half-filled cache before anything is created: serverless without vpcId', () => {
      const template = templateOf('serverlessWithoutVpc');
      const failed = failedParameterConstraints(template);
      expect(failed.map((check) => check.parameter)).toEqual(['CacheStageParameters']);
      expect(failed[0]!.constraint).toMatch(/serverless needs vpcId/);
      const { lint } = packaged.serverlessWithoutVpc;
      if ('error' in lint) throw lint.error;
      expect(lint.findings.map((finding) => `${finding.Rule.Id} ${finding.Location.Path.slice(0, 2).join('/')}`)).toContain(
        'E2015 Parameters/CacheStageParameters',
      );
    });

    it('allows exactly the documented cache combinations, and names what is missing or extra', () => {
      const check = templateOf('defaults').Parameters!.CacheStageParameters!;
      const allowed = (params: Parameters<typeof cacheSettings>[0]) => new RegExp(check.AllowedPattern!).test(cacheSettings(params));
      const redisUrl = 'rediss://cluster.example:6379';
      const vpcId = 'vpc-0123456789abcdef0';
      const sg = 'sg-0aaa1111bbbb2222c';
      // Documented.
      expect(allowed({})).toBe(true);
      expect(allowed({ cache: 'existing', redisUrl })).toBe(true);
      expect(
        allowed({ cache: 'existing', redisUrl: 'redis://10.0.0.5:6379', devicesSubnetIds: SUBNETS, devicesSecurityGroupIds: sg }),
      ).toBe(true);
      expect(allowed({ cache: 'serverless', vpcId, devicesSubnetIds: SUBNETS })).toBe(true);
      // Half filled, or a value that belongs to another mode.
      expect(allowed({ cache: 'none', redisUrl })).toBe(false);
      expect(allowed({ cache: 'none', devicesSubnetIds: SUBNETS, devicesSecurityGroupIds: sg })).toBe(false);
      expect(allowed({ cache: 'existing' })).toBe(false);
      expect(allowed({ cache: 'existing', redisUrl: 'http://cluster.example:6379' })).toBe(false);
      expect(allowed({ cache: 'existing', redisUrl, devicesSubnetIds: SUBNETS })).toBe(false);
      expect(allowed({ cache: 'existing', redisUrl, devicesSecurityGroupIds: sg })).toBe(false);
      expect(allowed({ cache: 'existing', redisUrl, vpcId })).toBe(false);
      expect(allowed({ cache: 'serverless', vpcId })).toBe(false);
      expect(allowed({ cache: 'serverless', vpcId, devicesSubnetIds: SUBNETS, devicesSecurityGroupIds: sg })).toBe(false);
      expect(allowed({ cache: 'serverless', vpcId, devicesSubnetIds: SUBNETS, redisUrl })).toBe(false);
      expect(allowed({ cache: 'serverless', vpcId, devicesSubnetIds: 'subnet-0a1b2c3d4e5f60718, subnet-1a2b3c4d5e6f70819' })).toBe(false);
      expect(allowed({ cache: 'Serverless', vpcId, devicesSubnetIds: SUBNETS })).toBe(false);
      for (const word of ['none', 'existing', 'serverless', 'redisUrl', 'vpcId', 'devicesSubnetIds', 'devicesSecurityGroupIds']) {
        expect(check.ConstraintDescription).toContain(word);
      }
    });

    it('checks the other choices of a stage the same way: redisCluster, jwtScopes, the inputs prefix, the retention, the alarm address', () => {
      const { Parameters: checks } = templateOf('defaults');
      expect(checks?.RedisClusterStageParameter).toMatchObject({ Default: 'auto', AllowedValues: ['auto', 'on', 'off'] });
      expect(checks?.JwtScopesStageParameter).toMatchObject({ Default: 'true', AllowedValues: ['true', 'false'] });
      const prefix = new RegExp(checks!.ImportInputPrefixStageParameter!.AllowedPattern!);
      // An empty prefix would expire every object of the bucket.
      expect(['incoming/', 'exports/daily/'].map((value) => prefix.test(value))).toEqual([true, true]);
      expect(['', 'incoming', '/incoming/'].map((value) => prefix.test(value))).toEqual([false, false, false]);
      expect(checks?.ArchiveRetentionDaysStageParameter).toMatchObject({ Type: 'Number', MinValue: 1 });
      const archive = new RegExp(checks!.ImportArchivePrefixStageParameter!.AllowedPattern!);
      expect(['archives/', 'tickets/archives/'].map((value) => archive.test(value))).toEqual([true, true]);
      expect(['', 'archives', '/archives/'].map((value) => archive.test(value))).toEqual([false, false, false]);
      // The two prefixes apart: neither inside the other (an import never writes over its inputs).
      const prefixes = checks!.ImportPrefixesStageParameter!;
      expect(prefixes.Default).toBe('incoming/;archives/');
      const apart = new RegExp(prefixes.AllowedPattern!);
      expect(['incoming/;archives/', 'a/;ab/', 'exports/in/;exports/out/'].map((value) => apart.test(value))).toEqual([true, true, true]);
      expect(['data/;data/', 'data/;data/archives/', 'data/in/;data/'].map((value) => apart.test(value))).toEqual([false, false, false]);
      expect(checks?.ImportAlarmHoursStageParameter).toMatchObject({ Type: 'Number', MinValue: 1, MaxValue: 168 });
      expect(String(checks?.ImportAlarmHoursStageParameter?.Default)).toBe('25');
      // A user name may stay in redisUrl, a password never (it would sit in the environment in clear).
      const redisUrl = checks!.RedisUrlStageParameter!;
      const withoutPassword = new RegExp(redisUrl.AllowedPattern!);
      expect(
        ['', 'rediss://cache.example:6379', 'rediss://devices@cache.example:6379'].map((value) => withoutPassword.test(value)),
      ).toEqual([true, true, true]);
      expect(
        ['rediss://devices:hunter2@cache.example:6379', 'redis://:hunter2@cache.example:6379'].map((value) => withoutPassword.test(value)),
      ).toEqual([false, false]);
      expect(redisUrl.ConstraintDescription).toContain('redisUrl');
      expect(redisUrl.ConstraintDescription).toContain('redisPasswordSsm');
      const email = new RegExp(checks!.AlarmEmailStageParameter!.AllowedPattern!);
      expect(['', 'ops@acme.example'].map((value) => email.test(value))).toEqual([true, true]);
      expect(['ops', 'a@b.example, c@d.example'].map((value) => email.test(value))).toEqual([false, false]);
    });
  });

  describe('the cache tier', () => {
    const vpcConfigOf = (template: CfnTemplate, fn: string) => propertiesOf(template, `${fn}LambdaFunction`).VpcConfig;

    it('none: the memory tier only, no VPC, no cache resources, the refresh switched off', () => {
      const template = templateOf('defaults');
      for (const fn of DEVICES_FUNCTIONS) {
        expect(environmentOf(template, fn).REDIS_URL, fn).toBe('');
        expect(vpcConfigOf(template, fn), fn).toBeUndefined();
      }
      expect(conditionHolds(template, 'DevicesInVpc')).toBe(false);
      expect(resourcesOfType(template, 'AWS::ElastiCache::ServerlessCache')).toEqual([]);
      expect(resourcesOfType(template, 'AWS::EC2::SecurityGroup')).toEqual([]);
      expect(resolveConditions(template, template.Resources.RefreshDevicesEventsRuleSchedule1!.Properties!.State)).toBe('DISABLED');
    });

    it('existing: REDIS_URL is the given cluster, reached in the given subnets and security groups', () => {
      const template = templateOf('existing');
      const params = COMBINATIONS.existing;
      for (const fn of DEVICES_FUNCTIONS) {
        expect(environmentOf(template, fn), fn).toMatchObject({
          REDIS_URL: params.redisUrl,
          REDIS_CLUSTER: 'on',
          REDIS_PASSWORD_SSM: params.redisPasswordSsm,
        });
        expect(vpcConfigOf(template, fn), fn).toEqual({
          SecurityGroupIds: { 'Fn::Split': [',', params.devicesSecurityGroupIds] },
          SubnetIds: { 'Fn::Split': [',', params.devicesSubnetIds] },
        });
      }
      expect(resourcesOfType(template, 'AWS::ElastiCache::ServerlessCache')).toEqual([]);
      expect(resolveConditions(template, template.Resources.RefreshDevicesEventsRuleSchedule1!.Properties!.State)).toBe('ENABLED');
    });

    it('serverless: a Valkey ElastiCache Serverless cache in the given subnets, REDIS_URL its TLS endpoint', () => {
      const template = templateOf('serverless');
      const caches = createdOfType(template, 'AWS::ElastiCache::ServerlessCache');
      expect(caches.map(([id]) => id)).toEqual(['DevicesCache']);
      expect(propertiesOf(template, 'DevicesCache')).toMatchObject({
        Engine: 'valkey',
        SubnetIds: { 'Fn::Split': [',', SUBNETS] },
        SecurityGroupIds: [{ 'Fn::GetAtt': ['CacheSecurityGroup', 'GroupId'] }],
      });
      expect(String(propertiesOf(template, 'DevicesCache').ServerlessCacheName)).toMatch(/^[a-z][a-z0-9-]{0,39}$/);
      for (const fn of DEVICES_FUNCTIONS) {
        // Serverless ElastiCache only speaks TLS: rediss://, its own address and port.
        expect(environmentOf(template, fn).REDIS_URL, fn).toEqual({
          'Fn::Sub': 'rediss://${DevicesCache.Endpoint.Address}:${DevicesCache.Endpoint.Port}',
        });
        expect(environmentOf(template, fn), fn).toMatchObject({ REDIS_CLUSTER: 'auto', REDIS_PASSWORD_SSM: '' });
        expect(vpcConfigOf(template, fn), fn).toEqual({
          SecurityGroupIds: [{ 'Fn::GetAtt': ['DevicesFunctionSecurityGroup', 'GroupId'] }],
          SubnetIds: { 'Fn::Split': [',', SUBNETS] },
        });
        expect(grantLines(template, fn), fn).toContain('ec2:CreateNetworkInterface on *');
      }
      for (const fn of FUNCTIONS.filter((name) => !(DEVICES_FUNCTIONS as readonly string[]).includes(name))) {
        expect(vpcConfigOf(template, fn), fn).toBeUndefined();
      }
      expect(resolveConditions(template, template.Resources.RefreshDevicesEventsRuleSchedule1!.Properties!.State)).toBe('ENABLED');
    });

    it("serverless: the cache lets in TCP 6379 and 6380 from the functions' security group only; the functions may go out anywhere", () => {
      const template = templateOf('serverless');
      const groups = createdOfType(template, 'AWS::EC2::SecurityGroup')
        .map(([id]) => id)
        .sort();
      expect(groups).toEqual(['CacheSecurityGroup', 'DevicesFunctionSecurityGroup']);
      for (const id of groups) expect(propertiesOf(template, id).VpcId, id).toBe(COMBINATIONS.serverless.vpcId);
      const cache = propertiesOf(template, 'CacheSecurityGroup') as {
        SecurityGroupIngress: Array<Record<string, CfnValue>>;
        SecurityGroupEgress: Array<Record<string, CfnValue>>;
      };
      expect(cache.SecurityGroupIngress.map(({ Description: _description, ...rule }) => rule)).toEqual([
        {
          IpProtocol: 'tcp',
          FromPort: 6379,
          ToPort: 6379,
          SourceSecurityGroupId: { 'Fn::GetAtt': ['DevicesFunctionSecurityGroup', 'GroupId'] },
        },
        {
          IpProtocol: 'tcp',
          FromPort: 6380,
          ToPort: 6380,
          SourceSecurityGroupId: { 'Fn::GetAtt': ['DevicesFunctionSecurityGroup', 'GroupId'] },
        },
      ]);
      // Nothing out of the cache (replies need no rule): the one egress rule matches no address it could reach.
      expect(cache.SecurityGroupEgress.map(({ Description: _description, ...rule }) => rule)).toEqual([
        { IpProtocol: '-1', CidrIp: '127.0.0.1/32' },
      ]);
      const functions = propertiesOf(template, 'DevicesFunctionSecurityGroup') as {
        SecurityGroupIngress?: unknown;
        SecurityGroupEgress: Array<Record<string, CfnValue>>;
      };
      expect(functions.SecurityGroupIngress).toBeUndefined();
      expect(functions.SecurityGroupEgress.map(({ Description: _description, ...rule }) => rule)).toEqual([
        { IpProtocol: '-1', CidrIp: '0.0.0.0/0' },
      ]);
      expect(resourcesOfType(template, 'AWS::EC2::SecurityGroupIngress')).toEqual([]);
    });

    it("grants the Redis password's SSM parameter, and the KMS key through SSM, to the devices functions' roles only when set", () => {
      const ssmArn = `arn:\${AWS::Partition}:ssm:\${AWS::Region}:\${AWS::AccountId}:parameter${COMBINATIONS.existing.redisPasswordSsm}`;
      for (const fn of DEVICES_FUNCTIONS) {
        expect(grantLines(templateOf('existing'), fn), fn).toEqual(
          expect.arrayContaining([`ssm:GetParameter on ${ssmArn}`, `kms:Decrypt on ${KMS_KEY_ARN}`]),
        );
        expect(
          grantLines(templateOf('serverless'), fn).filter((line) => /^(ssm|kms):/.test(line)),
          fn,
        ).toEqual([]);
      }
      for (const fn of ['Credentials', 'CreateUser', 'GetUser', 'ImportTickets']) {
        expect(
          grantLines(templateOf('existing'), fn).some((line) => line.includes(ssmArn)),
          fn,
        ).toBe(false);
      }
    });

    it('names no key ARN in any policy when no customer-managed key is set (no empty ARN for cfn-lint to find)', () => {
      for (const combination of ['defaults', 'serverless', 'noScopes'] as const) {
        expect(JSON.stringify(templateOf(combination).Resources)).not.toContain('kms:Decrypt');
      }
    });
  });

  describe('the scheduled functions', () => {
    it.each(DOCUMENTED)(
      '%s: refreshDevices and importTickets run asynchronously without retries, failures to one queue their roles may send to',
      (combination) => {
        const template = templateOf(combination);
        const queues = resourcesOfType(template, 'AWS::SQS::Queue');
        expect(queues.map(([id]) => id)).toEqual(['ScheduledRunFailuresQueue']);
        // 14 days, encrypted with SQS-managed keys.
        expect(queues[0]![1].Properties).toMatchObject({ MessageRetentionPeriod: 1209600, SqsManagedSseEnabled: true });
        const configs = resourcesOfType(template, 'AWS::Lambda::EventInvokeConfig').map(([, config]) => config.Properties!);
        expect(configs.map((config) => refText(config.FunctionName)).sort()).toEqual(SCHEDULED.map((fn) => `${fn}LambdaFunction`).sort());
        for (const config of configs) {
          expect(config.MaximumRetryAttempts).toBe(0);
          expect(config.DestinationConfig).toEqual({ OnFailure: { Destination: { 'Fn::GetAtt': ['ScheduledRunFailuresQueue', 'Arn'] } } });
        }
        for (const fn of FUNCTIONS) {
          const sends = grantLines(template, fn).filter((line) => line.startsWith('sqs:'));
          expect(sends, fn).toEqual(
            (SCHEDULED as readonly string[]).includes(fn) ? ['sqs:SendMessage on ScheduledRunFailuresQueue.Arn'] : [],
          );
        }
      },
    );

    it('runs one import at a time, with 3,008 MB unless the stage buys the second vCPU', () => {
      for (const [combination, memory] of [
        ['defaults', 3008],
        ['existing', 3538],
      ] as const) {
        const properties = propertiesOf(templateOf(combination), 'ImportTicketsLambdaFunction');
        expect(Number(properties.MemorySize), combination).toBe(memory);
        expect(properties.ReservedConcurrentExecutions, combination).toBe(1);
      }
    });
  });

  describe('alarms', () => {
    const ALWAYS = [
      'RefreshDevicesErrorsAlarm',
      'ImportTicketsErrorsAlarm',
      'HttpApi5xxRateAlarm',
      'FunctionThrottlesAlarm',
      'ScheduledRunFailuresAlarm',
      'UpstreamAuthFailuresAlarm',
      'HttpApi4xxRateAlarm',
    ];
    const alarmsOf = (template: CfnTemplate) => createdOfType(template, 'AWS::CloudWatch::Alarm');
    const alarm = (template: CfnTemplate, id: string) =>
      propertiesOf(template, id) as Record<string, CfnValue> & { Metrics?: Array<Record<string, CfnValue>> };

    it.each(DOCUMENTED)('%s: every alarm notifies the one SNS topic when it calls and when it is OK again', (combination) => {
      const template = templateOf(combination);
      expect(resourcesOfType(template, 'AWS::SNS::Topic').map(([id]) => id)).toEqual(['AlarmTopic']);
      const alarms = alarmsOf(template);
      expect(alarms.length).toBeGreaterThanOrEqual(ALWAYS.length);
      for (const [id] of alarms) {
        expect(alarm(template, id).AlarmActions, id).toEqual([{ Ref: 'AlarmTopic' }]);
        expect(alarm(template, id).OKActions, id).toEqual([{ Ref: 'AlarmTopic' }]);
      }
    });

    it("watches the refresh's completions only where a cache is configured, and the import's successes only where it is scheduled", () => {
      expect(
        alarmsOf(templateOf('defaults'))
          .map(([id]) => id)
          .sort(),
      ).toEqual([...ALWAYS].sort());
      expect(
        alarmsOf(templateOf('serverless'))
          .map(([id]) => id)
          .sort(),
      ).toEqual([...ALWAYS, 'DevicesRefreshMissingAlarm'].sort());
      expect(
        alarmsOf(templateOf('existing'))
          .map(([id]) => id)
          .sort(),
      ).toEqual([...ALWAYS, 'DevicesRefreshMissingAlarm', 'ImportMissingAlarm'].sort());
    });

    it('calls a cron-scheduled import missing after importAlarmHours without ImportSucceeded, hour by hour, missing data breaching', async () => {
      const root = new URL('../../../', import.meta.url);
      const importSource = await readFile(new URL('functions/import-tickets.ts', root), 'utf8');
      expect(importSource).toMatch(/makeLazyMetrics\('importTickets'\)/);
      expect(alarm(templateOf('existing'), 'ImportMissingAlarm')).toMatchObject({
        Namespace: 'device-users-import',
        MetricName: 'ImportSucceeded',
        Dimensions: [{ Name: 'service', Value: 'importTickets' }],
        Statistic: 'Sum',
        Period: 3600,
        EvaluationPeriods: 30,
        DatapointsToAlarm: 30,
        Threshold: 1,
        ComparisonOperator: 'LessThanThreshold',
        TreatMissingData: 'breaching',
      });
    });

    it("sums the devices functions' UpstreamAuthFailures and calls at the first one in 5 minutes", () => {
      const { Metrics: metrics, ...rest } = alarm(templateOf('defaults'), 'UpstreamAuthFailuresAlarm');
      const stats = metrics!.filter((metric) => metric.MetricStat !== undefined);
      expect(stats.map((metric) => metric.MetricStat)).toEqual(
        ['devices', 'mobileDevices', 'refreshDevices'].map((service) => ({
          Metric: {
            Namespace: 'device-users-import',
            MetricName: 'UpstreamAuthFailures',
            Dimensions: [{ Name: 'service', Value: service }],
          },
          Period: 300,
          Stat: 'Sum',
        })),
      );
      const sum = metrics!.find((metric) => metric.ReturnData === true)!;
      expect(sum.Expression).toBe(`SUM([${stats.map((metric) => String(metric.Id)).join(', ')}])`);
      expect(rest).toMatchObject({ ComparisonOperator: 'GreaterThanOrEqualToThreshold', Threshold: 1, TreatMissingData: 'notBreaching' });
    });

    it("rates the HTTP API's 4xx answers, calling above 20 % of at least 50 requests in 5 minutes (a wrong issuer: every call a 401)", () => {
      const { Metrics: metrics, ...rest } = alarm(templateOf('defaults'), 'HttpApi4xxRateAlarm');
      const stat = (name: string) =>
        metrics!.find((metric) => (metric.MetricStat as { Metric: { MetricName: string } } | undefined)?.Metric.MetricName === name);
      for (const name of ['4xx', 'Count']) {
        expect(stat(name)?.MetricStat, name).toMatchObject({
          Metric: { Namespace: 'AWS/ApiGateway', Dimensions: [{ Name: 'ApiId', Value: { Ref: 'HttpApi' } }] },
          Period: 300,
          Stat: 'Sum',
        });
      }
      const [errors, requests] = [String(stat('4xx')!.Id), String(stat('Count')!.Id)];
      expect(metrics!.find((metric) => metric.ReturnData === true)?.Expression).toBe(
        `IF(${requests} >= 50, 100 * ${errors} / ${requests}, 0)`,
      );
      expect(rest).toMatchObject({ ComparisonOperator: 'GreaterThanThreshold', Threshold: 20, TreatMissingData: 'notBreaching' });
    });

    it('calls DevicesRefreshSeconds missing for three periods by the namespace and service dimension the refresh writes', async () => {
      const root = new URL('../../../', import.meta.url);
      const metricsSource = await readFile(new URL('lib/runtime/metrics.ts', root), 'utf8');
      const refreshSource = await readFile(new URL('functions/refresh-devices.ts', root), 'utf8');
      const namespace = /NAMESPACE = '([^']+)'/.exec(metricsSource)?.[1];
      expect(namespace).toBe('device-users-import');
      // Powertools adds the service name as the `service` dimension.
      expect(refreshSource).toMatch(/makeLazyMetrics\('refreshDevices'\)/);
      expect(refreshSource).toMatch(/'DevicesRefreshSeconds'/);
      expect(alarm(templateOf('serverless'), 'DevicesRefreshMissingAlarm')).toMatchObject({
        Namespace: namespace,
        MetricName: 'DevicesRefreshSeconds',
        Dimensions: [{ Name: 'service', Value: 'refreshDevices' }],
        EvaluationPeriods: 3,
        DatapointsToAlarm: 3,
        TreatMissingData: 'breaching',
        ComparisonOperator: 'LessThanThreshold',
        Threshold: 1,
      });
    });

    it('counts the errors of refreshDevices and importTickets, each on its own function', () => {
      const template = templateOf('defaults');
      for (const fn of SCHEDULED) {
        expect(alarm(template, `${fn}ErrorsAlarm`), fn).toMatchObject({
          Namespace: 'AWS/Lambda',
          MetricName: 'Errors',
          Dimensions: [{ Name: 'FunctionName', Value: { Ref: `${fn}LambdaFunction` } }],
          ComparisonOperator: 'GreaterThanThreshold',
          Threshold: 0,
          TreatMissingData: 'notBreaching',
        });
      }
    });

    it("rates the HTTP API's 5xx answers against all its requests (metric math on the API's id)", () => {
      const { Metrics: metrics, ...rest } = alarm(templateOf('defaults'), 'HttpApi5xxRateAlarm');
      const stat = (name: string) =>
        metrics!.find((metric) => (metric.MetricStat as { Metric: { MetricName: string } } | undefined)?.Metric.MetricName === name);
      for (const name of ['5xx', 'Count']) {
        expect(stat(name)?.MetricStat, name).toMatchObject({
          Metric: { Namespace: 'AWS/ApiGateway', Dimensions: [{ Name: 'ApiId', Value: { Ref: 'HttpApi' } }] },
          Stat: 'Sum',
        });
        expect(stat(name)?.ReturnData, name).toBe(false);
      }
      const expression = metrics!.find((metric) => metric.ReturnData === true);
      expect(expression?.Expression).toBe(`100 * ${String(stat('5xx')!.Id)} / ${String(stat('Count')!.Id)}`);
      expect(rest).toMatchObject({ ComparisonOperator: 'GreaterThanThreshold', Threshold: 5, TreatMissingData: 'notBreaching' });
    });

    it("sums every function's throttles in one alarm", () => {
      const { Metrics: metrics } = alarm(templateOf('defaults'), 'FunctionThrottlesAlarm');
      const throttles = metrics!.filter((metric) => metric.MetricStat !== undefined);
      expect(
        throttles
          .map((metric) => {
            const { Namespace, MetricName, Dimensions } = (
              metric.MetricStat as { Metric: { Namespace: string; MetricName: string; Dimensions: Array<{ Value: CfnValue }> } }
            ).Metric;
            return `${Namespace} ${MetricName} ${refText(Dimensions[0]!.Value)}`;
          })
          .sort(),
      ).toEqual(FUNCTIONS.map((fn) => `AWS/Lambda Throttles ${fn}LambdaFunction`).sort());
      const sum = metrics!.find((metric) => metric.ReturnData === true)!;
      expect(sum.Expression).toBe(`SUM([${throttles.map((metric) => String(metric.Id)).join(', ')}])`);
    });

    it('calls a failure record waiting in the failure queue', () => {
      expect(alarm(templateOf('defaults'), 'ScheduledRunFailuresAlarm')).toMatchObject({
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': ['ScheduledRunFailuresQueue', 'QueueName'] } }],
        ComparisonOperator: 'GreaterThanThreshold',
        Threshold: 0,
      });
    });

    it('subscribes alarmEmail to the topic when set, and nobody otherwise', () => {
      const subscriptions = (combination: Combination) => createdOfType(templateOf(combination), 'AWS::SNS::Subscription');
      expect(subscriptions('defaults')).toEqual([]);
      for (const combination of ['existing', 'serverless'] as const) {
        expect(
          subscriptions(combination).map(([, resource]) => resource.Properties),
          combination,
        ).toEqual([{ TopicArn: { Ref: 'AlarmTopic' }, Protocol: 'email', Endpoint: 'ops@acme.example' }]);
      }
    });
  });

  describe('callers of the HTTP API', () => {
    const SCOPES: Record<string, string[] | undefined> = {
      'GET /devices': ['devices.read'],
      'GET /devices/summary': ['devices.read'],
      'GET /mobile-devices': ['devices.read'],
      'GET /mobile-devices/summary': ['devices.read'],
      'GET /api/users/{id}': ['users.read'],
      'POST /api/users': ['users.write'],
      'POST /credentials': ['credentials.write'],
      // A valid token, no scope.
      $default: undefined,
    };
    const scopesOf = (template: CfnTemplate) =>
      Object.fromEntries(
        resourcesOfType(template, 'AWS::ApiGatewayV2::Route').map(([id]) => {
          const route = propertiesOf(template, id);
          expect(route.AuthorizationType, String(route.RouteKey)).toBe('JWT');
          return [String(route.RouteKey), route.AuthorizationScopes as string[] | undefined];
        }),
      );

    it("requires exactly each route's scope, and a valid token without scope on $default", () => {
      for (const combination of ['defaults', 'existing', 'serverless'] as const)
        expect(scopesOf(templateOf(combination)), combination).toEqual(SCOPES);
    });

    it('requires no scope anywhere with jwtScopes false, a valid token still', () => {
      expect(scopesOf(templateOf('noScopes'))).toEqual(Object.fromEntries(Object.keys(SCOPES).map((key) => [key, undefined])));
    });

    it("limits the stage's request rate and burst, from the stage parameters", () => {
      const settings = (combination: Combination) =>
        propertiesOf(templateOf(combination), 'HttpApiStage').DefaultRouteSettings as Record<string, CfnValue>;
      const limits = (combination: Combination) => [
        Number(settings(combination).ThrottlingRateLimit),
        Number(settings(combination).ThrottlingBurstLimit),
      ];
      expect(limits('defaults')).toEqual([100, 200]);
      expect(limits('existing')).toEqual([20, 40]);
      expect(settings('defaults').DetailedMetricsEnabled).toBe(false);
    });
  });

  describe('data', () => {
    it('protects the users table from deletion', () => {
      for (const combination of DOCUMENTED) {
        expect(propertiesOf(templateOf(combination), 'UsersTable').DeletionProtectionEnabled, combination).toBe(true);
      }
    });

    it('versions the import bucket and expires replaced versions and the inputs after archiveRetentionDays', () => {
      for (const [combination, prefix, days] of [
        ['defaults', 'incoming/', 30],
        ['existing', 'exports/', 45],
      ] as const) {
        const bucket = propertiesOf(templateOf(combination), 'ImportBucket') as {
          VersioningConfiguration: unknown;
          LifecycleConfiguration: { Rules: Array<Record<string, CfnValue>> };
        };
        expect(bucket.VersioningConfiguration, combination).toEqual({ Status: 'Enabled' });
        const rules = bucket.LifecycleConfiguration.Rules;
        for (const rule of rules) expect(rule.Status, String(rule.Id)).toBe('Enabled');
        const noncurrent = rules.filter((rule) => rule.NoncurrentVersionExpiration !== undefined);
        expect(
          noncurrent.map((rule) => [
            rule.Prefix,
            Number((rule.NoncurrentVersionExpiration as { NoncurrentDays: CfnValue }).NoncurrentDays),
          ]),
          combination,
        ).toEqual([[undefined, days]]);
        const current = rules.filter((rule) => rule.ExpirationInDays !== undefined);
        // Only the inputs expire: the archives' current versions stay.
        expect(
          current.map((rule) => [rule.Prefix, Number(rule.ExpirationInDays)]),
          combination,
        ).toEqual([[prefix, days]]);
      }
    });
  });
});
