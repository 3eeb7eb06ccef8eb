import { useEffect, useRef, useState } from 'preact/hooks'
import type { AssistantKeyView, AuthApi, CreatedApiKey, McpAccessView } from '../api/auth-api.ts'
import { failureText, isFailure } from '../api/envelope.ts'
import { assistantSetup, SUGGESTED_TOOLS, toolWords } from './assistant-words.ts'
import { usePanelAction } from './use-panel-action.ts'

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' })
const timeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })

interface AssistantsPanelProps {
  auth: AuthApi
  /** The user's CRM id: the operator needs it to allow tools, so the empty state names it in the command to ask for. */
  crmId: string
}

/**
 * "AI assistants" on the account page (docs/web-client.md): what the tools an operator allowed
 * let an assistant do, in words; the user's API keys, revoked after a confirmation; and a new key,
 * shown once with the Claude Code command and VS Code settings that connect an assistant to the
 * gateway's MCP endpoint (docs/mcp.md).
 */
export function AssistantsPanel({ auth, crmId }: AssistantsPanelProps) {
  const [access, setAccess] = useState<McpAccessView>()
  const [off, setOff] = useState(false)
  const [name, setName] = useState('')
  const [created, setCreated] = useState<CreatedApiKey>()
  const [confirming, setConfirming] = useState('')
  const { note, setNote, busy, act } = usePanelAction()
  const confirmButton = useRef<HTMLButtonElement>(null)

  useEffect(() => {
    if (confirming) confirmButton.current?.focus()
  }, [confirming])

  async function load() {
    try {
      setAccess(await auth.mcpAccess())
    } catch (failure) {
      if (isFailure(failure, 'NotFound')) setOff(true)
      else setNote(failureText(failure))
    }
  }

  useEffect(() => {
    load()
  }, [auth])

  const create = (event: Event) => {
    event.preventDefault()
    act(
      async () => {
        const key = await auth.createApiKey(name.trim())
        setCreated(key)
        setName('')
        await load()
        return `${key.apiKey.name} created. Copy the key now: it is shown only once.`
      },
      {
        InvalidRequest: 'A key name can have up to 100 characters and no tabs or other control characters.',
      },
    )
  }

  const revoke = (key: AssistantKeyView) =>
    act(async () => {
      await auth.revokeApiKey(key.id)
      setConfirming('')
      if (created?.apiKey.id === key.id) setCreated(undefined)
      setAccess((known) => known && { ...known, keys: known.keys.filter((other) => other.id !== key.id) })
      return `${key.name} revoked. Assistants using it can no longer connect.`
    })

  async function copy(text: string, done: string) {
    try {
      await navigator.clipboard.writeText(text)
      setNote(done)
    } catch {
      setNote('Copying is not allowed here: select the text and copy it.')
    }
  }

  return (
    <section class="account-section assistants" aria-labelledby="assistants-heading">
      <h2 id="assistants-heading">AI assistants</h2>
      <p class="hint">
        An AI assistant such as Claude can read and act on your account with a key you create here, using only the tools
        an operator has allowed for you.
      </p>
      {off && <p>This server does not offer tools for AI assistants.</p>}
      {!access && !off && !note && <p class="hint">Loading…</p>}
      {access && (
        <>
          <h3>What your assistants may do</h3>
          {access.tools.length > 0 ? (
            <ul class="assistant-tools">
              {access.tools.flatMap((tool) => toolWords(tool).map((words) => <li key={words}>{words}</li>))}
            </ul>
          ) : (
            <div class="assistant-empty">
              <p>
                An operator has not allowed any tools for you yet. Ask your administrator to allow the ones you want,
                for example reading your wallet balance and your chats. They can run:
              </p>
              <pre class="setup-text">
                <code>{`npx atrium mcp allow --user ${crmId} --tool ${SUGGESTED_TOOLS.join(',')}`}</code>
              </pre>
            </div>
          )}

          <h3>Keys for assistants</h3>
          {access.keys.length === 0 ? (
            <p class="hint">No keys yet. Create one for each assistant, so you can revoke one without the others.</p>
          ) : (
            <ul class="credential-list assistant-keys">
              {access.keys.map((key) => (
                <li key={key.id}>
                  <span class="credential-name">{key.name}</span>
                  <span class="hint">
                    <code>atr_{key.prefix}_…</code> · created {dateFormat.format(key.created)} ·{' '}
                    {key.lastUsed ? `last used ${timeFormat.format(key.lastUsed)}` : 'not used yet'}
                  </span>
                  {key.tools.length > 0 && (
                    <span class="key-tools">
                      Also allowed with this key: {key.tools.flatMap((tool) => toolWords(tool)).join('; ')}
                    </span>
                  )}
                  <span class="credential-actions">
                    {confirming === key.id ? (
                      <fieldset class="confirm">
                        <legend>Revoke {key.name}? Assistants using it stop at once.</legend>
                        <button
                          type="button"
                          class="danger"
                          disabled={busy}
                          ref={confirmButton}
                          onClick={() => revoke(key)}
                        >
                          Yes, revoke
                        </button>
                        <button type="button" class="secondary" onClick={() => setConfirming('')}>
                          Keep
                        </button>
                      </fieldset>
                    ) : (
                      <button
                        type="button"
                        class="link-button"
                        aria-label={`Revoke ${key.name}`}
                        disabled={busy}
                        onClick={() => setConfirming(key.id)}
                      >
                        Revoke
                      </button>
                    )}
                  </span>
                </li>
              ))}
            </ul>
          )}

          <form class="assistant-key-form" onSubmit={create}>
            <label for="assistant-key-name">Name for a new key</label>
            <div class="inline-fields">
              <input
                id="assistant-key-name"
                class="key-name"
                maxLength={100}
                required
                placeholder="for example, Claude on my laptop"
                value={name}
                onInput={(event) => setName(event.currentTarget.value)}
              />
              <button type="submit" disabled={busy}>
                Create key
              </button>
            </div>
          </form>

          {created && (
            <NewKey
              created={created}
              endpoint={access.endpoint}
              onCopy={copy}
              onDone={() => {
                setCreated(undefined)
                setNote('')
              }}
            />
          )}
        </>
      )}
      {note && <p role="status">{note}</p>}
    </section>
  )
}

interface NewKeyProps {
  created: CreatedApiKey
  endpoint: string
  onCopy: (text: string, done: string) => void
  onDone: () => void
}

/** A key just made: the key itself, once, and how to give it to Claude Code or VS Code. */
function NewKey({ created, endpoint, onCopy, onDone }: NewKeyProps) {
  const { claudeCode, vsCode } = assistantSetup(endpoint, created.key)
  return (
    <section class="new-key" aria-labelledby="new-key-heading">
      <h3 id="new-key-heading">Connect an assistant with “{created.apiKey.name}”</h3>
      <p class="setup-note">
        <strong>Copy the key now: it is shown only this once.</strong> Anyone who has it can use the tools above as you.
      </p>
      <label for="new-key-value">Key</label>
      <div class="invite-link-row">
        <input
          id="new-key-value"
          class="key-value"
          readOnly
          spellcheck={false}
          value={created.key}
          onFocus={(event) => event.currentTarget.select()}
        />
        <button type="button" onClick={() => onCopy(created.key, 'Key copied.')}>
          Copy key
        </button>
      </div>

      <h4>Claude Code</h4>
      <p class="hint setup-note">Run this in a terminal:</p>
      <pre class="setup-text">
        <code>{claudeCode}</code>
      </pre>
      <button type="button" class="secondary" onClick={() => onCopy(claudeCode, 'Claude Code command copied.')}>
        Copy command
      </button>

      <h4>VS Code</h4>
      <p class="hint setup-note">
        Save this as <code>.vscode/mcp.json</code> in your project; VS Code asks for the key the first time.
      </p>
      <pre class="setup-text">
        <code>{vsCode}</code>
      </pre>
      <button type="button" class="secondary" onClick={() => onCopy(vsCode, 'VS Code settings copied.')}>
        Copy settings
      </button>

      <p class="hint setup-note">
        Other assistants: the server address is <code class="endpoint">{endpoint}</code>, with the header{' '}
        <code>Authorization: Bearer</code> and the key.
      </p>
      <button type="button" class="secondary" onClick={onDone}>
        Done, hide the key
      </button>
    </section>
  )
}
