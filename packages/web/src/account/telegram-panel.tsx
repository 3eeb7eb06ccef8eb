import { useEffect, useState } from 'preact/hooks'
import type { ChatApi } from '../api/chat-api.ts'
import { failureText } from '../api/envelope.ts'
import type { TelegramDeepLink, TelegramLinkState } from '../api/telegram-api.ts'

/** How often the panel asks whether the bot has linked the account while a link is open. */
const LINK_CHECK_MS = 3000
const timeFormat = new Intl.DateTimeFormat(undefined, { timeStyle: 'short' })

/**
 * The person's Telegram (docs/web-client.md, "Account"): "Link Telegram" shows a one-time
 * `t.me` link that opens the bot, the linked Telegram name, the chat notifications switch and
 * "Unlink". Nothing is shown while the site has no Telegram bot.
 */
export function TelegramPanel({ chat }: { chat: ChatApi }) {
  const [state, setState] = useState<TelegramLinkState | undefined>()
  const [deepLink, setDeepLink] = useState<TelegramDeepLink | undefined>()
  const [note, setNote] = useState('')
  const [busy, setBusy] = useState(false)

  useEffect(() => {
    chat
      .telegramLink()
      .then(setState)
      .catch((failure) => setNote(failureText(failure)))
  }, [chat])

  // While a link is open, the bot may link the account at any moment: check until it did or expired.
  useEffect(() => {
    if (!deepLink) return
    const expires = Date.parse(deepLink.expires_at)
    const timer = setInterval(() => {
      if (Date.now() > expires) {
        setDeepLink(undefined)
        setNote('The link expired. Choose "Link Telegram" for a fresh one.')
        return
      }
      chat
        .telegramLink()
        .then((fresh) => {
          if (!fresh.linked) return
          setState(fresh)
          setDeepLink(undefined)
          setNote(`Telegram linked: ${fresh.telegram_name}.`)
        })
        .catch(() => undefined)
    }, LINK_CHECK_MS)
    return () => clearInterval(timer)
  }, [chat, deepLink])

  async function act(work: () => Promise<void>) {
    setBusy(true)
    setNote('')
    try {
      await work()
    } catch (failure) {
      setNote(failureText(failure))
    } finally {
      setBusy(false)
    }
  }

  const link = () => act(async () => setDeepLink(await chat.linkTelegram()))
  const unlink = () =>
    act(async () => {
      setState(await chat.unlinkTelegram())
      setNote('Telegram is unlinked. Codes and notifications no longer go there.')
    })
  // The switch moves at once; the server's answer confirms it, a failure puts it back.
  const notify = (enabled: boolean) => {
    const before = state
    if (before) setState({ ...before, notifications: enabled })
    return act(async () => {
      try {
        setState(await chat.setTelegramNotifications(enabled))
      } catch (failure) {
        setState(before)
        throw failure
      }
    })
  }

  if (!state?.available) return note ? <p role="status">{note}</p> : null
  return (
    <section class="account-section" aria-labelledby="telegram-heading">
      <h2 id="telegram-heading">Telegram</h2>
      {state.linked ? (
        <>
          <p>
            Linked to <strong>{state.telegram_name || 'your Telegram account'}</strong>. Sign-in codes for your phone
            number can come there.
          </p>
          <label class="toggle">
            <input
              type="checkbox"
              checked={state.notifications}
              disabled={busy}
              onChange={(event) => notify(event.currentTarget.checked)}
            />
            Send chat notifications to Telegram
          </label>
          <p>
            <button type="button" class="link-button" disabled={busy} onClick={unlink}>
              Unlink Telegram
            </button>
          </p>
        </>
      ) : deepLink ? (
        <>
          <p>
            Open this link on a device with Telegram and press <strong>Start</strong>:
          </p>
          <p>
            <a class="telegram-link" href={deepLink.url} target="_blank" rel="noopener noreferrer">
              {deepLink.url}
            </a>
          </p>
          <p class="hint">
            It works once, until {timeFormat.format(new Date(deepLink.expires_at))}. This page updates when Telegram is
            linked.
          </p>
        </>
      ) : (
        <>
          <p class="hint">Get sign-in codes, and chat notifications if you want them, from our Telegram bot.</p>
          <p>
            <button type="button" disabled={busy} onClick={link}>
              Link Telegram
            </button>
          </p>
        </>
      )}
      {note && <p role="status">{note}</p>}
    </section>
  )
}
