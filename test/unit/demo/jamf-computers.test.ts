import { describe, expect, it } from 'vitest';
import { generateJamfComputers, type JamfComputer } from '../../../demo/jamf-computers.ts';

type Section = Record<string, unknown> | null | undefined;
const section = (record: JamfComputer, name: string): Section => record[name] as Section;
const share = (records: JamfComputer[], test: (record: JamfComputer) => boolean): number => records.filter(test).length / records.length;

describe('generated Jamf Pro records', () => {
  const records = generateJamfComputers(20_000, 9);

  it('are the same for the same seed and differ for another', () => {
    expect(generateJamfComputers(300, 9)).toEqual(records.slice(0, 300));
    expect(generateJamfComputers(300, 10)).not.toEqual(records.slice(0, 300));
  });

  it('have ascending numeric string ids with gaps', () => {
    const ids = records.map((record) => Number(record.id));
    expect(ids.every((id, index) => index === 0 || id > ids[index - 1]!)).toBe(true);
    expect(ids.at(-1)).toBeGreaterThan(records.length);
  });

  it('carry both forms of a two-part version, as the Jamf binary and Declarative Device Management report them', () => {
    const versions = new Set(records.map((record) => section(record, 'operatingSystem')?.version));
    for (const version of ['15.2', '15.2.0', '26.6', '26.6.0', '26.6.2', '15.7.9', '14.8.9']) expect(versions, version).toContain(version);
  });

  it('carry a response level with its supplemental build, and null where none is applied', () => {
    const systems = records.map((record) => section(record, 'operatingSystem')).filter((os): os is Record<string, unknown> => !!os);
    const withResponse = systems.filter((os) => os.rapidSecurityResponse !== null);
    expect(new Set(withResponse.map((os) => os.rapidSecurityResponse))).toEqual(new Set(['(a)', '(c)']));
    for (const os of withResponse) expect(os.supplementalBuildVersion).not.toBe(os.build);
    for (const os of systems.filter((entry) => entry.rapidSecurityResponse === null)) expect(os.supplementalBuildVersion).toBe(os.build);
    // Responses are rare in a fleet: a few percent.
    expect(withResponse.length / systems.length).toBeGreaterThan(0.02);
    expect(withResponse.length / systems.length).toBeLessThan(0.1);
  });

  it("include Jamf's own example Mac, rarely: Mac OS X 10.9.5 with (a)", () => {
    const old = records.filter((record) => section(record, 'operatingSystem')?.name === 'Mac OS X');
    expect(old.length).toBeGreaterThan(0);
    expect(old.length / records.length).toBeLessThan(0.01);
    for (const record of old) expect(section(record, 'operatingSystem')).toMatchObject({ build: '13A603', rapidSecurityResponse: '(a)' });
    expect(old.some((record) => section(record, 'operatingSystem')?.version === '10.9.5')).toBe(true);
  });

  it('write timestamps with milliseconds mostly, whole seconds sometimes', () => {
    const reportDates = records
      .map((record) => section(record, 'general')?.reportDate)
      .filter((date): date is string => typeof date === 'string');
    const withMs = share(records, (record) => /\.\d{3}Z$/.test(String(section(record, 'general')?.reportDate)));
    expect(withMs).toBeGreaterThan(0.6);
    expect(reportDates.some((date) => /T\d{2}:\d{2}:\d{2}Z$/.test(date))).toBe(true);
    for (const date of reportDates) expect(Number.isNaN(Date.parse(date))).toBe(false);
  });

  it('have the v3 general (lastContactTime, remoteManagement) and the v4 one (lastCheckIn and lastContact, neither of those)', () => {
    const generals = records.map((record) => section(record, 'general')).filter((general): general is Record<string, unknown> => !!general);
    const v4 = generals.filter((general) => 'lastCheckIn' in general);
    expect(v4.length / generals.length).toBeGreaterThan(0.2);
    for (const general of v4) {
      expect(general).toHaveProperty('lastContact');
      expect(general).not.toHaveProperty('lastContactTime');
      expect(general).not.toHaveProperty('remoteManagement');
    }
    for (const general of generals.filter((entry) => !('lastCheckIn' in entry))) {
      expect(general).toHaveProperty('lastContactTime');
      expect(general).toHaveProperty('remoteManagement');
    }
  });

  it('have null and absent sections, a general that is null among them', () => {
    expect(records.some((record) => record.general === null)).toBe(true);
    expect(share(records, (record) => record.general === null)).toBeLessThan(0.03);
    for (const name of ['hardware', 'userAndLocation', 'operatingSystem']) {
      expect(
        records.some((record) => record[name] === null),
        `${name} null`,
      ).toBe(true);
      expect(
        records.some((record) => !(name in record)),
        `${name} absent`,
      ).toBe(true);
    }
  });

  it('mostly have UUID udids, some that are not, some null', () => {
    const uuid = /^[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}$/;
    expect(share(records, (record) => typeof record.udid === 'string' && uuid.test(record.udid))).toBeGreaterThan(0.9);
    expect(records.some((record) => typeof record.udid === 'string' && /^\d+$/.test(record.udid))).toBe(true);
    expect(records.some((record) => typeof record.udid === 'string' && /^[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}$/.test(record.udid))).toBe(
      true,
    );
    expect(records.some((record) => record.udid === null)).toBe(true);
  });

  it('have 12-character serials on Intel Macs and 10-character ones on Apple silicon', () => {
    const serials = records
      .map((record) => section(record, 'hardware'))
      .filter((hardware): hardware is Record<string, unknown> => !!hardware && hardware.serialNumber !== '');
    for (const hardware of serials) expect(String(hardware.serialNumber)).toHaveLength(hardware.appleSilicon ? 10 : 12);
    expect(serials.some((hardware) => hardware.appleSilicon === false)).toBe(true);
  });

  it('lean to the newest release of each major, as a managed fleet does', () => {
    const on = (version: string) => share(records, (record) => section(record, 'operatingSystem')?.version === version);
    expect(on('26.6.2')).toBeGreaterThan(on('26.6.1'));
    expect(on('15.7.9')).toBeGreaterThan(on('15.7'));
    expect(on('14.8.9')).toBeGreaterThan(on('14.8'));
  });
});
