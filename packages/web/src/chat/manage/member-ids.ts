const CRM_ID = /^[1-9][0-9]{0,15}$/

/** True for a user id (CRM id) as typed: digits without a leading zero, at most 16. */
export function isUserId(text: string): boolean {
  return CRM_ID.test(text)
}

/** The user ids typed into a members field (commas, semicolons or spaces between them), or the first bad entry. */
export function parseMemberIds(text: string): { ids: string[] } | { bad: string } {
  const entries = text.split(/[\s,;]+/).filter((entry) => entry !== '')
  const bad = entries.find((entry) => !isUserId(entry))
  return bad === undefined ? { ids: [...new Set(entries)] } : { bad }
}
