import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

type Window = { Period: number; EvaluationPeriods: number; DatapointsToAlarm: number };
type Resolver = (context: { resolveVariable: (name: string) => Promise<unknown> }) => Promise<Window>;

/** infra/import-alarm-window.cjs as osls calls it: with the stage parameters it resolves. */
const importAlarmWindow = createRequire(import.meta.url)('../../../infra/import-alarm-window.cjs') as Resolver;
const windowFor = (importSchedule: string, importAlarmHours = '25') =>
  importAlarmWindow({
    resolveVariable: (name) =>
      Promise.resolve({ 'param:importSchedule': importSchedule, 'param:importAlarmHours': importAlarmHours }[name]),
  });

describe('the import-missing alarm window', () => {
  it.each([
    ['rate(1 day)', 25],
    ['rate(6 hours)', 7],
    ['rate(1 hour)', 2],
    ['rate(30 minutes)', 2],
    ['rate(90 minutes)', 3],
    ['rate(6 days)', 145],
  ])('watches %s over the rate plus an hour, in whole hours (%i)', async (schedule, hours) => {
    expect(await windowFor(schedule)).toEqual({ Period: 3600, EvaluationPeriods: hours, DatapointsToAlarm: hours });
  });

  it('watches a cron schedule over importAlarmHours', async () => {
    expect(await windowFor('cron(0 3 * * ? *)', '30')).toEqual({ Period: 3600, EvaluationPeriods: 30, DatapointsToAlarm: 30 });
    expect(await windowFor('cron(0 3 ? * MON *)', '168')).toMatchObject({ EvaluationPeriods: 168 });
  });

  it('refuses a window longer than the 7 days CloudWatch evaluates, naming the parameter', async () => {
    await expect(windowFor('rate(7 days)')).rejects.toThrow(/169 hours \(importSchedule rate\(7 days\) plus an hour\).*at most 168/);
    await expect(windowFor('cron(0 3 * * ? *)', '200')).rejects.toThrow(/importAlarmHours 200/);
  });

  it('refuses a schedule or an hour count it cannot read, naming the parameter', async () => {
    await expect(windowFor('every day')).rejects.toThrow(/importSchedule must be rate\(.*\) or cron/);
    await expect(windowFor('rate(0 days)')).rejects.toThrow(/importSchedule/);
    await expect(windowFor('rate(2 weeks)')).rejects.toThrow(/importSchedule/);
    await expect(windowFor('cron(0 3 * * ? *)', 'a day')).rejects.toThrow(/importAlarmHours must be a whole number/);
    await expect(windowFor('cron(0 3 * * ? *)', '0')).rejects.toThrow(/importAlarmHours/);
  });
});
