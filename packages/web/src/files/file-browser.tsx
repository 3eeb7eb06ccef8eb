import { useEffect, useState } from 'preact/hooks'
import type { UserView } from '../api/auth-api.ts'
import type { ChatApi } from '../api/chat-api.ts'
import type { ChatView, FileView, MessageView } from '../api/chat-types.ts'
import { failureText, isFailure } from '../api/envelope.ts'
import { senderName } from '../chat/message/names.ts'
import { Link } from '../router/link.tsx'
import { routePath } from '../router/routes.ts'
import { addFilePage, type ChatFiles, EMPTY_CHAT_FILES, olderCursor } from './chat-files.ts'
import { ImageThumbnail } from './file-attachment.tsx'
import { fileKind, fileKindIcon, fileKindLabel } from './file-kind.ts'
import { formatSize } from './file-size.ts'
import { fileDownloadUrl, fileUrl } from './file-urls.ts'

interface FileBrowserProps {
  api: ChatApi
  chatId: string
  me: UserView
}

/** Files per request; "Load older files" asks for the next page. */
export const FILES_PAGE = 30

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })

function FileRow({ message, file, chat, me }: { message: MessageView; file: FileView; chat: ChatView; me: UserView }) {
  const kind = fileKind(file.type, file.name)
  const download = fileDownloadUrl(file.id)
  return (
    <li class="file-row" data-message-id={message.id}>
      <span class="file-row-preview">
        {kind === 'image' ? (
          <ImageThumbnail file={file} src={fileUrl(file.id)} downloadHref={download} />
        ) : (
          <span class="file-icon" role="img" aria-label={fileKindLabel(kind)}>
            {fileKindIcon(kind)}
          </span>
        )}
      </span>
      <span class="file-row-facts">
        <a class="file-name" href={download} download={file.name} title={`Download ${file.name}`}>
          {file.name}
        </a>
        <span class="file-row-meta">
          {formatSize(file.size)} · {senderName(message.owner, chat, me)} ·{' '}
          <time dateTime={message.time}>{dateFormat.format(new Date(message.time))}</time>
        </span>
        {message.content && <span class="file-row-caption">{message.content}</span>}
      </span>
    </li>
  )
}

/**
 * /chat/files/{chatId}: the files of one chat, newest first, each with its name, size, sender and
 * date; images as thumbnails that open a preview. Older files load on request (get_chat_files).
 */
export function FileBrowser({ api, chatId, me }: FileBrowserProps) {
  const [chat, setChat] = useState<ChatView>()
  const [list, setList] = useState<ChatFiles>(EMPTY_CHAT_FILES)
  const [loading, setLoading] = useState(false)
  const [error, setError] = useState('')
  const [missing, setMissing] = useState(false)

  function failed(failure: unknown) {
    if (isFailure(failure, 'ChatNotFound', 'InvalidRequest')) setMissing(true)
    else setError(failureText(failure))
  }

  useEffect(() => {
    setChat(undefined)
    setList(EMPTY_CHAT_FILES)
    setMissing(false)
    setError('')
    api.getChatInfo(chatId).then(setChat, failed)
    api.getChatFiles(chatId, { limit: FILES_PAGE }).then((page) => setList(addFilePage(EMPTY_CHAT_FILES, page)), failed)
  }, [api, chatId])

  async function loadOlder() {
    const before = olderCursor(list)
    if (!before || loading) return
    setLoading(true)
    setError('')
    try {
      const page = await api.getChatFiles(chatId, { before, limit: FILES_PAGE })
      setList((current) => addFilePage(current, page))
    } catch (failure) {
      failed(failure)
    } finally {
      setLoading(false)
    }
  }

  const chatPath = routePath({ name: 'messenger', chatId })
  return (
    <main class="file-browser">
      <header class="file-browser-header">
        <Link href={chatPath} class="back-link file-browser-back" aria-label="Back to the chat">
          ←
        </Link>
        <div>
          <h1>Files</h1>
          {chat && <p class="chat-kind">in {chat.name}</p>}
        </div>
      </header>
      {error && (
        <p class="form-error" role="alert">
          {error}
        </p>
      )}
      {missing ? (
        <p class="empty">
          This chat does not exist, or you are not a member of it.{' '}
          <Link href={routePath({ name: 'messenger' })}>Back to your chats</Link>
        </p>
      ) : !list.loaded || !chat ? (
        !error && <p class="loading">Loading files…</p>
      ) : list.files.length === 0 ? (
        <p class="empty">
          No files in this chat yet. Attach one with the 📎 button in the <Link href={chatPath}>conversation</Link>.
        </p>
      ) : (
        <>
          <ul class="file-rows" aria-label={`Files in ${chat.name}`}>
            {list.files.map((message) =>
              message.file ? (
                <FileRow key={message.id} message={message} file={message.file} chat={chat} me={me} />
              ) : null,
            )}
          </ul>
          {list.hasMore && (
            <button type="button" class="secondary load-older-files" disabled={loading} onClick={loadOlder}>
              {loading ? 'Loading…' : 'Load older files'}
            </button>
          )}
        </>
      )}
    </main>
  )
}
