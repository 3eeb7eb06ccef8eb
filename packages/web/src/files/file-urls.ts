/** Where a signed-in member reads a message's file: inline for what browsers show safely, else as a download. */
export function fileUrl(fileId: string): string {
  return `/auth/v1/file/${encodeURIComponent(fileId)}`
}

/** The same file, always as a download (Content-Disposition: attachment). */
export function fileDownloadUrl(fileId: string): string {
  return `${fileUrl(fileId)}?download=1`
}

/** A guest's path to the file of a message of their invite's chat; it is asked for with X-Device-Guid. */
export function guestFilePath(inviteCode: string, messageId: string): string {
  return `/auth/v2/file/${encodeURIComponent(inviteCode)}?message=${encodeURIComponent(messageId)}`
}
