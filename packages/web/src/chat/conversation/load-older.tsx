/** The button above a conversation's messages that loads older history, while there is some. */
export function LoadOlderButton({
  hasOlder,
  loadingOlder,
  onLoadOlder,
}: {
  hasOlder: boolean
  loadingOlder: boolean
  onLoadOlder: () => void
}) {
  if (!hasOlder) return null
  return (
    <button type="button" class="load-older" disabled={loadingOlder} onClick={onLoadOlder}>
      {loadingOlder ? 'Loading…' : 'Load older messages'}
    </button>
  )
}
