import { ApiError, ChatMessFlags, verifyFileToken } from '@atrium/platform'
import type { Caller } from '../access.ts'
import { requireUser } from '../access.ts'
import type { MessageRow } from './messages.repository.ts'

/** The columns of a message that carries a file. */
export type AttachmentFields = Pick<MessageRow, 'file_id' | 'file_name' | 'file_size' | 'file_type' | 'flags'>

/**
 * The attachment a file token stands for (docs/files.md, "Attaching a file"): the gateway signed
 * the finished upload's id, uploader, name, size and type with the inter-service secret, so the
 * chat module trusts those and never asks back. Only the uploader attaches their file; guests
 * cannot (spec "Authentication" 7).
 */
export function attachmentOf(serviceSecret: string, token: string, caller: Caller, now = Date.now()): AttachmentFields {
  requireUser(caller, 'attach files')
  const verified = verifyFileToken(serviceSecret, token, now)
  if ('problem' in verified) {
    throw new ApiError(
      'FileTokenInvalid',
      verified.problem === 'expired'
        ? 'the file token has expired; HEAD the finished upload for a fresh one'
        : 'the file token is not one the gateway issued',
    )
  }
  const { claim } = verified
  if (claim.owner !== caller.member) throw new ApiError('Forbidden', 'this upload belongs to another user')
  return {
    file_id: claim.id,
    file_name: claim.name,
    file_size: claim.size,
    file_type: claim.type,
    flags: ChatMessFlags.File,
  }
}
