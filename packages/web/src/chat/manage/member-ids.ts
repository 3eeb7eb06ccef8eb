const CRM_ID = /^[1-9][0-9]{0,15}$/

/** The user ids typed into a members field (commas, semicolons or spaces between them), or the first bad entry. */
export function parseMemberIds(text: string): { ids: string[] } | { bad: string } {
  const entries = text.split(/[\s,;]+/).filter((entry) => entry !== '')
  const bad = entries.find((entry) => !CRM_ID.test(entry))
  return bad === undefined ? { ids: [...new Set(entries)] } : { bad }
}
