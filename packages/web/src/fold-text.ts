/** Lower case without accents, so a search for "zoe" finds "Zoë" and "ÉQUIPE" finds "équipe". */
export function foldText(text: string): string {
  return text.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase()
}
