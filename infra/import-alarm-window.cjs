/* global module */
'use strict';

/**
 * The window of the import-missing alarm (infra/alarms.yml): how long without a successful run
 * (ImportSucceeded) before it calls. For a `rate(…)` schedule, the rate plus an hour (a run may be
 * late or slow); for a `cron(…)` one, `importAlarmHours`, since a cron's gaps vary. The window is
 * whole hours, every one of which must lack a success (missing data breaches). CloudWatch evaluates
 * at most 7 days, so a longer window fails packaging, naming the parameter.
 */
const HOUR = 3600;
const MAX_HOURS = 168;
const UNIT_SECONDS = { minute: 60, minutes: 60, hour: HOUR, hours: HOUR, day: 24 * HOUR, days: 24 * HOUR };

const windowOf = (schedule, alarmHours) => {
  const rate = /^rate\(\s*(\d+)\s+([a-z]+)\s*\)$/.exec(schedule);
  if (rate !== null && UNIT_SECONDS[rate[2]] !== undefined && Number(rate[1]) > 0) {
    return { hours: Math.ceil((Number(rate[1]) * UNIT_SECONDS[rate[2]] + HOUR) / HOUR), from: `importSchedule ${schedule} plus an hour` };
  }
  if (/^cron\(.+\)$/.test(schedule)) {
    if (!/^\d+$/.test(alarmHours) || Number(alarmHours) < 1) {
      throw new Error(`Stage parameter importAlarmHours must be a whole number of hours from 1 to ${MAX_HOURS} (got "${alarmHours}")`);
    }
    return { hours: Number(alarmHours), from: `importAlarmHours ${alarmHours}` };
  }
  throw new Error(`Stage parameter importSchedule must be rate(<n> minutes|hours|days) or cron(…) (got "${schedule}")`);
};

module.exports = async ({ resolveVariable }) => {
  const schedule = String(await resolveVariable('param:importSchedule')).trim();
  const alarmHours = String(await resolveVariable('param:importAlarmHours')).trim();
  const { hours, from } = windowOf(schedule, alarmHours);
  if (hours > MAX_HOURS) {
    throw new Error(
      `The import alarm would wait ${hours} hours (${from}); CloudWatch watches at most ${MAX_HOURS}: choose a shorter importSchedule, or a cron(…) one with importAlarmHours up to ${MAX_HOURS}`,
    );
  }
  return { Period: HOUR, EvaluationPeriods: hours, DatapointsToAlarm: hours };
};
