import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { inflateRawSync } from 'node:zlib';

/** A CloudFormation value: a literal, a list, or an object that may be an intrinsic function. */
export type CfnValue = string | number | boolean | null | CfnValue[] | { [key: string]: CfnValue };

export interface CfnResource {
  Type: string;
  Properties?: Record<string, CfnValue>;
  DependsOn?: string | string[];
  Condition?: string;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
}

export interface CfnParameter {
  Type: string;
  Default?: string | number;
  AllowedValues?: string[];
  AllowedPattern?: string;
  MinValue?: number;
  MaxValue?: number;
  ConstraintDescription?: string;
}

export interface CfnTemplate {
  Parameters?: Record<string, CfnParameter>;
  Conditions?: Record<string, CfnValue>;
  Resources: Record<string, CfnResource>;
  Outputs?: Record<string, { Value: CfnValue; Condition?: string }>;
}

export interface PackagedService {
  template: CfnTemplate;
  /** The copy of the service that was packaged (sources included), until `cleanup`. */
  serviceDir: string;
  /** Directory holding the per-function zips. */
  artifactsDir: string;
  cleanup: () => Promise<void>;
}

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

/** What `osls package` needs to bundle: the descriptor, its includes and every source file. */
const SERVICE_FILES = ['serverless.yml', 'esbuild.config.cjs', 'package.json', 'tsconfig.json', 'infra', 'scripts', 'functions', 'lib'];

/**
 * Runs `osls package` offline on a copy of the service (other people build in the working tree at the
 * same time; the copy shares its node_modules through a symlink) with the given stage parameters.
 */
export const packageService = async (params: Record<string, string>, timeoutMs = 150_000): Promise<PackagedService> => {
  const workDir = await mkdtemp(join(tmpdir(), 'deploy-template-'));
  const cleanup = () => rm(workDir, { recursive: true, force: true });
  try {
    const serviceDir = join(workDir, 'service');
    await mkdir(serviceDir);
    await Promise.all(SERVICE_FILES.map((file) => cp(join(repoRoot, file), join(serviceDir, file), { recursive: true })));
    await symlink(join(repoRoot, 'node_modules'), join(serviceDir, 'node_modules'), 'dir');
    const artifactsDir = join(workDir, 'artifacts');
    const args = ['package', '--package', artifactsDir, '--stage', 'test', '--region', 'eu-west-1'];
    for (const [name, value] of Object.entries(params)) args.push('--param', `${name}=${value}`);
    const bin = join(repoRoot, 'node_modules/.bin');
    await run(join(bin, 'osls'), args, {
      cwd: serviceDir,
      timeout: timeoutMs,
      maxBuffer: 16 * 1024 * 1024,
      // Node 24 from the project's own `.bin` runs the CLI; no AWS credentials are needed offline.
      env: {
        PATH: `${bin}:${process.env.PATH ?? ''}`,
        HOME: workDir,
        CI: 'true',
        SLS_TELEMETRY_DISABLED: '1',
        SLS_NOTIFICATIONS_MODE: 'off',
      },
    });
    const template = JSON.parse(await readFile(join(artifactsDir, 'cloudformation-template-update-stack.json'), 'utf8')) as CfnTemplate;
    return { template, serviceDir, artifactsDir, cleanup };
  } catch (error) {
    await cleanup();
    throw error;
  }
};

const isObject = (value: CfnValue | undefined): value is { [key: string]: CfnValue } =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const NO_VALUE = Symbol('AWS::NoValue');

/** Evaluates a condition of the template the way CloudFormation does (literal operands only). */
export const conditionHolds = (template: CfnTemplate, name: string): boolean => {
  const evaluate = (value: CfnValue, depth: number): boolean => {
    if (depth > 20) throw new Error(`condition ${name} nests too deeply`);
    if (!isObject(value)) throw new Error(`condition ${name}: unexpected operand ${JSON.stringify(value)}`);
    const [[fn, args]] = Object.entries(value) as [[string, CfnValue]];
    if (fn === 'Condition') return evaluate(template.Conditions?.[String(args)] ?? null, depth + 1);
    if (!Array.isArray(args)) throw new Error(`condition ${name}: ${fn} needs a list`);
    if (fn === 'Fn::Equals') return JSON.stringify(args[0]) === JSON.stringify(args[1]);
    if (fn === 'Fn::Not') return !evaluate(args[0]!, depth + 1);
    if (fn === 'Fn::And') return args.every((arg) => evaluate(arg, depth + 1));
    if (fn === 'Fn::Or') return args.some((arg) => evaluate(arg, depth + 1));
    throw new Error(`condition ${name}: unsupported ${fn}`);
  };
  const definition = template.Conditions?.[name];
  if (definition === undefined) throw new Error(`no condition ${name}`);
  return evaluate(definition, 0);
};

/** Resolves every Fn::If (and drops AWS::NoValue) so a value reads as deployed; other intrinsics stay. */
export const resolveConditions = (template: CfnTemplate, value: CfnValue | undefined): CfnValue | undefined => {
  const walk = (current: CfnValue): CfnValue | typeof NO_VALUE => {
    if (Array.isArray(current)) {
      return current.map(walk).filter((item): item is CfnValue => item !== NO_VALUE);
    }
    if (!isObject(current)) return current;
    if (current.Ref === 'AWS::NoValue') return NO_VALUE;
    const branch = current['Fn::If'];
    if (Array.isArray(branch)) return walk(conditionHolds(template, String(branch[0])) ? branch[1]! : branch[2]!);
    const result: { [key: string]: CfnValue } = {};
    for (const [key, item] of Object.entries(current)) {
      const resolved = walk(item);
      if (resolved !== NO_VALUE) result[key] = resolved;
    }
    return result;
  };
  if (value === undefined) return undefined;
  const resolved = walk(value);
  return resolved === NO_VALUE ? undefined : resolved;
};

export const resourcesOfType = (template: CfnTemplate, type: string): Array<[string, CfnResource]> =>
  Object.entries(template.Resources).filter(([, resource]) => resource.Type === type);

/** A short, comparable spelling of a reference: `Fn::GetAtt [T, Arn]` → `T.Arn`, `Ref X` → `X`, Sub → its text. */
export const refText = (value: CfnValue | undefined): string => {
  if (typeof value === 'string') return value;
  if (isObject(value)) {
    if (Array.isArray(value['Fn::GetAtt'])) return value['Fn::GetAtt'].join('.');
    if (typeof value.Ref === 'string') return value.Ref;
    if (typeof value['Fn::Sub'] === 'string') return value['Fn::Sub'];
  }
  return JSON.stringify(value);
};

export interface Grant {
  action: string;
  resource: string;
  condition?: CfnValue;
}

/** Every (action, resource) an IAM role allows once its conditions are resolved. */
export const roleGrants = (template: CfnTemplate, roleLogicalId: string): Grant[] => {
  const role = template.Resources[roleLogicalId];
  if (role?.Type !== 'AWS::IAM::Role') throw new Error(`${roleLogicalId} is not an IAM role`);
  const properties = resolveConditions(template, role.Properties) as {
    Policies?: Array<{ PolicyDocument: { Statement: CfnValue[] } }>;
    ManagedPolicyArns?: unknown;
  };
  if (properties.ManagedPolicyArns !== undefined) throw new Error(`${roleLogicalId} has managed policies`);
  const grants: Grant[] = [];
  for (const policy of properties.Policies ?? []) {
    for (const statement of policy.PolicyDocument.Statement as Array<{
      Effect: string;
      Action: CfnValue;
      Resource: CfnValue;
      Condition?: CfnValue;
    }>) {
      if (statement.Effect !== 'Allow') continue;
      const actions = Array.isArray(statement.Action) ? statement.Action : [statement.Action];
      const resources = Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource];
      for (const action of actions) {
        for (const resource of resources) {
          grants.push({
            action: String(action),
            resource: refText(resource),
            ...(statement.Condition ? { condition: statement.Condition } : {}),
          });
        }
      }
    }
  }
  return grants;
};

interface ZipEntry {
  name: string;
  size: number;
  method: number;
  compressedSize: number;
  localHeaderOffset: number;
}

const readZipDirectory = (zip: Buffer, file: string): ZipEntry[] => {
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (end < 0) throw new Error(`${file} is not a zip`);
  const count = zip.readUInt16LE(end + 10);
  let offset = zip.readUInt32LE(end + 16);
  const entries: ZipEntry[] = [];
  for (let index = 0; index < count; index += 1) {
    if (zip.readUInt32LE(offset) !== 0x02014b50) throw new Error(`${file}: bad central directory`);
    const nameLength = zip.readUInt16LE(offset + 28);
    entries.push({
      name: zip.toString('utf8', offset + 46, offset + 46 + nameLength),
      method: zip.readUInt16LE(offset + 10),
      compressedSize: zip.readUInt32LE(offset + 20),
      size: zip.readUInt32LE(offset + 24),
      localHeaderOffset: zip.readUInt32LE(offset + 42),
    });
    offset += 46 + nameLength + zip.readUInt16LE(offset + 30) + zip.readUInt16LE(offset + 32);
  }
  return entries;
};

/** The file names and sizes inside a zip, read from its central directory (no unzip tool needed). */
export const zipEntries = async (file: string): Promise<Array<{ name: string; size: number }>> =>
  readZipDirectory(await readFile(file), file).map(({ name, size }) => ({ name, size }));

/** One file's content from a zip (stored or deflated, the two methods deployment zips use). */
export const zipEntryContent = async (file: string, name: string): Promise<Buffer> => {
  const zip = await readFile(file);
  const entry = readZipDirectory(zip, file).find((candidate) => candidate.name === name);
  if (!entry) throw new Error(`${file} has no ${name}`);
  const header = entry.localHeaderOffset;
  const start = header + 30 + zip.readUInt16LE(header + 26) + zip.readUInt16LE(header + 28);
  const data = zip.subarray(start, start + entry.compressedSize);
  if (entry.method === 0) return data;
  if (entry.method === 8) return inflateRawSync(data);
  throw new Error(`${file}: ${name} uses compression method ${entry.method}`);
};

/**
 * The template parameters whose value (its default: osls passes none at deploy time) breaks its own
 * constraint, as CloudFormation checks them before it creates or changes anything: each with its
 * ConstraintDescription. infra/stage-checks.yml turns stage parameter combinations into such checks.
 */
export const failedParameterConstraints = (template: CfnTemplate): Array<{ parameter: string; value: string; constraint: string }> =>
  Object.entries(template.Parameters ?? {}).flatMap(([parameter, definition]) => {
    const value = String(definition.Default ?? '');
    const allowed =
      (definition.AllowedValues === undefined || definition.AllowedValues.map(String).includes(value)) &&
      (definition.AllowedPattern === undefined || new RegExp(definition.AllowedPattern).test(value)) &&
      (definition.Type !== 'Number' || (value.trim() !== '' && Number.isFinite(Number(value)))) &&
      (definition.MinValue === undefined || Number(value) >= definition.MinValue) &&
      (definition.MaxValue === undefined || Number(value) <= definition.MaxValue);
    return allowed ? [] : [{ parameter, value, constraint: definition.ConstraintDescription ?? '' }];
  });

export interface LintFinding {
  Level: 'Error' | 'Warning' | 'Informational';
  Message: string;
  Rule: { Id: string };
  Location: { Path: Array<string | number> };
}

const CFN_LINT_REQUIRED =
  "cfn-lint (v1, AWS's Python CloudFormation linter: `pip install cfn-lint`) is required on PATH to check the packaged template";

/**
 * AWS's cfn-lint (v1) on a packaged template: every finding, whatever its level. It must be
 * installed: without it this throws, so a test relying on it fails saying so (never passes).
 */
export const lintTemplate = async (templateFile: string): Promise<LintFinding[]> => {
  let version: string;
  try {
    version = (await run('cfn-lint', ['--version'], { timeout: 60_000 })).stdout.trim();
  } catch (error) {
    throw new Error(`${CFN_LINT_REQUIRED}; running \`cfn-lint --version\` failed: ${(error as Error).message}`, { cause: error });
  }
  if (!/^cfn-lint 1\./.test(version)) throw new Error(`${CFN_LINT_REQUIRED}; found "${version}"`);
  let stdout: string;
  try {
    ({ stdout } = await run('cfn-lint', ['--format', 'json', '--', templateFile], { timeout: 120_000, maxBuffer: 16 * 1024 * 1024 }));
  } catch (error) {
    // cfn-lint exits with a bit mask of the levels it found (2 errors, 4 warnings, 8 informational);
    // anything else without a JSON report is a failure of cfn-lint itself.
    const failed = error as { stdout?: string; code?: unknown; message: string };
    if (typeof failed.code !== 'number' || !failed.stdout?.trim().startsWith('[')) {
      throw new Error(`cfn-lint failed on ${templateFile}: ${failed.message}`, { cause: error });
    }
    stdout = failed.stdout;
  }
  return JSON.parse(stdout) as LintFinding[];
};

/** One line per finding: `E3510 Resources/X/Properties/Y: message`. */
export const describeFindings = (findings: LintFinding[]): string =>
  findings.map((finding) => `${finding.Rule.Id} ${finding.Location.Path.join('/')}: ${finding.Message}`).join('\n');
