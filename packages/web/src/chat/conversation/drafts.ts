import { localStorageOrNone } from '../../start-up.ts'

/** Where a person's unsent text of one chat is kept in this browser. */
const PREFIX = 'atrium.draft.'
const keyOf = (person: string, chatId: string) => `${PREFIX}${person}.${chatId}`

/**
 * A person's unsent message in each chat, kept in this browser (localStorage) so that switching
 * chats or reloading keeps it, as chat apps keep drafts. Blocked storage keeps nothing.
 */
export function createDrafts(storage: Storage | undefined = localStorageOrNone()) {
  /** Every draft of a person, by chat id. */
  function all(person: string): Map<string, string> {
    const found = new Map<string, string>()
    if (!storage) return found
    const own = `${PREFIX}${person}.`
    for (let index = 0; index < storage.length; index++) {
      const key = storage.key(index)
      if (key?.startsWith(own)) found.set(key.slice(own.length), storage.getItem(key) ?? '')
    }
    return found
  }

  return {
    read(person: string, chatId: string): string {
      return storage?.getItem(keyOf(person, chatId)) ?? ''
    },
    /** Keeps `text` as the draft; an empty or blank text removes it. */
    save(person: string, chatId: string, text: string): void {
      try {
        if (text.trim() === '') storage?.removeItem(keyOf(person, chatId))
        else storage?.setItem(keyOf(person, chatId), text)
      } catch {
        // A full storage keeps the previous draft; the text stays in the field.
      }
    },
    /** Every draft of a person, by chat id (for the chat list). */
    all,
    /** Removes every draft of a person (at sign-out, so the next person on this browser sees none). */
    forget(person: string): void {
      for (const chatId of all(person).keys()) storage?.removeItem(keyOf(person, chatId))
    },
  }
}
