/**
 * Hints the page's inline start-up script reads (early-requests.ts) to save round trips on the way
 * to the first render: that this browser was signed in when it last looked (ask for the chat list
 * beside the session), and which chat each recently opened path showed (ask for its first page
 * at once).
 */

/** Non-secret: only says this browser was signed in when it last looked. */
export const SIGNED_IN_KEY = 'atrium.signedIn'

type HintStorage = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>

/** Whether the browser was signed in when it last asked (a hint: the session may have ended since). */
export function probablySignedIn(storage: HintStorage | undefined): boolean {
  try {
    return storage?.getItem(SIGNED_IN_KEY) === '1'
  } catch {
    return false
  }
}

/** Records whether the browser is signed in; storage that refuses (private mode, quota) is ignored. */
export function rememberSignedIn(storage: HintStorage | undefined, signedIn: boolean): void {
  try {
    if (signedIn) storage?.setItem(SIGNED_IN_KEY, '1')
    else {
      storage?.removeItem(SIGNED_IN_KEY)
      // The next person to sign in on this browser has other chats.
      storage?.removeItem(OPENED_CHATS_KEY)
    }
  } catch {
    // Only a hint: without it the list is requested after the session, as without storage.
  }
}

/** Non-secret: the chat ids recently opened paths showed, `[[path id, chat id], …]`, newest first. */
export const OPENED_CHATS_KEY = 'atrium.openedChats'

/** How many opened paths are remembered. */
export const OPENED_CHATS_KEPT = 20

function openedChats(storage: HintStorage | undefined): Array<[string, string]> {
  try {
    const value: unknown = JSON.parse(storage?.getItem(OPENED_CHATS_KEY) ?? '[]')
    if (!Array.isArray(value)) return []
    return value.filter(
      (entry): entry is [string, string] =>
        Array.isArray(entry) && typeof entry[0] === 'string' && typeof entry[1] === 'string',
    )
  } catch {
    return []
  }
}

/**
 * The chat `/chat/c/{pathId}` showed when last opened (the same id for a group or channel, the
 * private chat for a peer's CRM id), or undefined.
 */
export function openedChat(storage: HintStorage | undefined, pathId: string): string | undefined {
  return openedChats(storage).find(([path]) => path === pathId)?.[1]
}

/** Records the chat a path showed, keeping the OPENED_CHATS_KEPT most recent paths. */
export function rememberOpenedChat(storage: HintStorage | undefined, pathId: string, chatId: string): void {
  const entries = openedChats(storage)
  if (entries[0]?.[0] === pathId && entries[0][1] === chatId) return
  const kept = [[pathId, chatId], ...entries.filter(([path]) => path !== pathId)].slice(0, OPENED_CHATS_KEPT)
  try {
    storage?.setItem(OPENED_CHATS_KEY, JSON.stringify(kept))
  } catch {
    // Only a hint: without it the first page waits for the chat list.
  }
}

/** The page's local storage, or undefined where reading it throws (blocked storage). */
export function localStorageOrNone(): Storage | undefined {
  try {
    return window.localStorage
  } catch {
    return undefined
  }
}
