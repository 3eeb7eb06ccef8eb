import { Type } from 'typebox'
import { Id } from '../messages/messages.schema.ts'
import { CallView } from './call-record.ts'

/** Longest ICE candidate line accepted (RFC 8839 lines are far shorter). */
export const MAX_CANDIDATE_LENGTH = 2048

const Sdp = Type.String({
  minLength: 1,
  description: 'A session description (RFC 8866) as RTCSessionDescription.sdp; at most Calls.MaxSdpLength characters.',
})

/** What operations answer about an active call, with the timing its clients keep to. */
const CallAnswer = Type.Object({
  call: CallView,
  keepalive_seconds: Type.Integer({
    description: 'Send a keepalive signal at least this often while the call is active, or it ends as failed.',
  }),
  ring_seconds: Type.Integer({ description: 'An unanswered call ends as missed after this long.' }),
})

const callId = Type.Object({ call_id: Id }, { additionalProperties: false })

export const initiateCall = {
  body: Type.Object(
    {
      chat_id: Id,
      media: Type.Union([Type.Literal('audio'), Type.Literal('video')], {
        description: 'What the caller offers; the callee may answer a video call with audio only.',
      }),
      sdp: Sdp,
    },
    { additionalProperties: false },
  ),
  response: { 200: CallAnswer },
}

export const answerCall = {
  body: Type.Object({ call_id: Id, sdp: Sdp }, { additionalProperties: false }),
  response: { 200: CallAnswer },
}

export const rejectCall = {
  body: callId,
  response: { 200: Type.Object({ call: CallView }) },
}

export const endCallSchema = {
  body: Type.Object(
    {
      call_id: Id,
      failed: Type.Optional(
        Type.Boolean({
          description: 'The media could not be connected (ICE failed): the call ends as failed instead of completed.',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  response: { 200: Type.Object({ call: CallView }) },
}

const Candidate = Type.Object(
  {
    candidate: Type.String({
      maxLength: MAX_CANDIDATE_LENGTH,
      description: "RTCIceCandidate.candidate; '' marks the end of candidates.",
    }),
    sdp_mid: Type.String({ maxLength: 64 }),
    sdp_mline_index: Type.Integer({ minimum: 0, maximum: 255 }),
  },
  { additionalProperties: false },
)

export const sendSignal = {
  body: Type.Object(
    {
      call_id: Id,
      type: Type.Union(
        [Type.Literal('offer'), Type.Literal('answer'), Type.Literal('candidate'), Type.Literal('keepalive')],
        {
          description:
            'offer/answer: a renegotiation of a connected call (sdp); candidate: a trickled ICE candidate; keepalive: a sign of life, not forwarded.',
        },
      ),
      sdp: Type.Optional(Sdp),
      candidate: Type.Optional(Candidate),
    },
    { additionalProperties: false },
  ),
  response: {
    200: Type.Object({
      delivered: Type.Boolean({ description: 'True when the signal went to the other party.' }),
      ended: Type.Optional(
        Type.Boolean({
          description: 'Present (true) when the call had ended: a candidate or keepalive is dropped, not refused.',
        }),
      ),
    }),
  },
}

export const callHistory = {
  querystring: Type.Object(
    {
      before: Type.Optional(Id),
      limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
    },
    { additionalProperties: false },
  ),
  response: {
    200: Type.Object({
      calls: Type.Array(
        Type.Object({
          ...CallView.properties,
          direction: Type.Union([Type.Literal('outgoing'), Type.Literal('incoming')]),
          peer: Type.String({ description: 'The other participant.' }),
          peer_name: Type.String({ description: "Their display name; '' when they have none." }),
        }),
      ),
      has_more: Type.Boolean(),
    }),
  },
}

export const activeCall = {
  response: {
    200: Type.Object({
      call: Type.Union([CallView, Type.Null()], {
        description: "The caller's ringing or connected call; null for none.",
      }),
      offer: Type.String({
        description: "The caller's SDP offer while the call rings for the person asking; '' otherwise.",
      }),
      keepalive_seconds: Type.Integer(),
      ring_seconds: Type.Integer(),
    }),
  },
}
