/** What a node's replies to CLUSTER NODES, CLUSTER INFO and INFO say. */

export const SLOT_COUNT = 16_384;

export interface NodeLine {
  id: string;
  port: number;
  flags: string[];
  role: 'master' | 'replica';
  /** The id of the master of a replica. */
  masterId: string | undefined;
  slots: [number, number][];
}

/** One line of CLUSTER NODES: `<id> <ip:port@cport[,hostname]> <flags> <master> <ping> <pong> <epoch> <link> <slot>…`. */
const parseNodeLine = (line: string): NodeLine | undefined => {
  const fields = line.trim().split(' ');
  if (fields.length < 8) return undefined;
  const [id, address, flagText, master] = fields as [string, string, string, string];
  const port = Number(/:(\d+)@/.exec(address)?.[1]);
  if (!Number.isInteger(port)) return undefined;
  const flags = flagText.split(',');
  const slots = fields
    .slice(8)
    // `[slot->-id]` / `[slot-<-id]`: a slot being migrated, not one served.
    .filter((field) => !field.startsWith('['))
    .map((field): [number, number] => {
      const [start, end] = field.split('-').map(Number) as [number, number | undefined];
      return [start, end ?? start];
    });
  return { id, port, flags, role: flags.includes('slave') ? 'replica' : 'master', masterId: master === '-' ? undefined : master, slots };
};

export const parseNodes = (text: string): NodeLine[] =>
  text
    .split('\n')
    .map(parseNodeLine)
    .filter((line) => line !== undefined);

export const failing = (line: NodeLine): boolean =>
  line.flags.includes('fail') || line.flags.includes('fail?') || line.flags.includes('handshake') || line.flags.includes('noaddr');

/** Which port serves each slot, in one node's view, as text to compare views: `0-5460:P1 5461-10922:P2 …`. */
export const slotMap = (view: NodeLine[]): { text: string; covered: number; owners: Set<number> } => {
  const ranges = view
    .filter((line) => line.role === 'master')
    .flatMap((line) => line.slots.map(([start, end]) => ({ start, end, port: line.port })))
    .sort((a, b) => a.start - b.start);
  return {
    text: ranges.map(({ start, end, port }) => `${start}-${end}:${port}`).join(' '),
    covered: ranges.reduce((sum, { start, end }) => sum + end - start + 1, 0),
    owners: new Set(ranges.map(({ port }) => port)),
  };
};

export const infoField = (info: string, name: string): string | undefined => new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim();
