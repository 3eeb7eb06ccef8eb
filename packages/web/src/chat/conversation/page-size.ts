/** Messages per page of history (a module of its own: the inline start-up script needs only this). */
export const PAGE = 50
