import { useState } from 'preact/hooks'
import { failureText } from '../api/envelope.ts'

/**
 * What an account panel shows around one action at a time: `busy` while it runs (its buttons are
 * disabled), then `note`, the action's own words or the failure in words (`words` names codes the
 * panel explains itself).
 */
export function usePanelAction() {
  const [note, setNote] = useState('')
  const [busy, setBusy] = useState(false)

  async function act(action: () => Promise<string>, words: Parameters<typeof failureText>[1] = {}) {
    setBusy(true)
    setNote('')
    try {
      setNote(await action())
    } catch (failure) {
      setNote(failureText(failure, words))
    } finally {
      setBusy(false)
    }
  }

  return { note, setNote, busy, act }
}
