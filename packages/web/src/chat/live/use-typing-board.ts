import { useEffect, useState } from 'preact/hooks'
import type { TypingBoard } from './typing-board.ts'

/**
 * A reading of the typing board kept current: read again at every change of the board and when the
 * first entry it covers ends by itself (the chat's with `chatId`, any chat's without).
 */
export function useTypingReading<T>(board: TypingBoard, read: () => T, chatId?: string): T {
  const [reading, setReading] = useState(read)
  const [tick, setTick] = useState(0)
  useEffect(() => board.subscribe(() => setTick((n) => n + 1)), [board])
  useEffect(() => {
    setReading(read)
    const next = board.nextExpiry(chatId)
    if (next === undefined) return
    const timer = setTimeout(() => setTick((n) => n + 1), Math.max(0, next - Date.now()) + 50)
    return () => clearTimeout(timer)
  }, [board, chatId, tick])
  return reading
}
