// Placeholder until the ticket import lands (issue 5).
export const handler = async (): Promise<Record<string, unknown>> => ({});
