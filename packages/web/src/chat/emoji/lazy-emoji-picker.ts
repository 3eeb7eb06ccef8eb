import { lazy } from '../../router/lazy.tsx'

/**
 * The emoji picker from its own chunk (it is not needed to show a chat), one loader for every
 * place that opens it: "More reactions" and the composer's 😊 preload it and share what loaded.
 */
export const EmojiPicker = lazy(() => import('./emoji-picker.tsx').then((module) => module.EmojiPicker))
