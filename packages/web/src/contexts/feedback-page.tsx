import { useState } from 'preact/hooks'
import type { ChatApi } from '../api/chat-api.ts'
import type { FeedbackView } from '../api/contexts-api.ts'
import { failureText } from '../api/envelope.ts'
import type { ClientConfig } from '../config/client-config.ts'
import { MessageScreen } from '../screens/message-screen.tsx'
import { objectTypeWord, parseObjectType } from './object-types.ts'

interface FeedbackPageProps {
  api: Pick<ChatApi, 'createFeedback'>
  feedback: ClientConfig['feedback']
  /** The route's {type}: a FeedbackType number or name. */
  type: string
  id: string
}

/** What each star means, 1 to 5. */
const RATING_WORDS = ['Very bad', 'Bad', 'Okay', 'Good', 'Excellent']

/** The spec's semantics of a rating: 4–5 positive, 1–2 negative (create_feedback answers the same). */
function sentimentLine(feedback: FeedbackView): string {
  const rated = `You rated it ${feedback.rating} of 5`
  if (feedback.sentiment === 'positive') return `${rated}: positive feedback. We are glad it went well.`
  if (feedback.sentiment === 'negative') return `${rated}: negative feedback. We are sorry it was not good.`
  return `${rated}.`
}

/** Five radio buttons drawn as stars; arrow keys move between them like any radio group. */
function StarRating({ value, onChange }: { value: number; onChange: (rating: number) => void }) {
  return (
    <fieldset class="stars">
      <legend class="stars-legend">Your rating</legend>
      <div class="star-row">
        {RATING_WORDS.map((word, index) => {
          const rating = index + 1
          return (
            <span key={rating} class="star">
              <input
                type="radio"
                class="visually-hidden star-input"
                id={`rating-${rating}`}
                name="rating"
                value={rating}
                checked={value === rating}
                onChange={() => onChange(rating)}
              />
              <label for={`rating-${rating}`} class={rating <= value ? 'filled' : undefined} title={word}>
                <span aria-hidden="true">★</span>
                <span class="visually-hidden">
                  {rating} {rating === 1 ? 'star' : 'stars'}: {word}
                </span>
              </label>
            </span>
          )
        })}
      </div>
      <p class="rating-word" aria-hidden="true">
        {value ? RATING_WORDS[value - 1] : 'Choose 1 to 5 stars'}
      </p>
    </fieldset>
  )
}

/**
 * /chat/feedback/{type}/{id}: a 1–5 rating with an optional comment, sent with create_feedback,
 * for the object types the client configuration allows (`feedback.types`).
 */
export function FeedbackPage({ api, feedback, type, id }: FeedbackPageProps) {
  const objectType = parseObjectType(type)
  const [rating, setRating] = useState(0)
  const [comment, setComment] = useState('')
  const [sending, setSending] = useState(false)
  const [error, setError] = useState('')
  const [sent, setSent] = useState<FeedbackView>()

  if (objectType === undefined) {
    return (
      <MessageScreen title="Nothing to rate here">
        <p>
          <code>{type}</code> is not a kind of thing you can rate. Check the link you followed.
        </p>
      </MessageScreen>
    )
  }
  const word = objectTypeWord(objectType)
  if (!feedback.types.includes(objectType)) {
    return (
      <MessageScreen title="Feedback not accepted">
        <p>This site does not take feedback on {word}s.</p>
      </MessageScreen>
    )
  }
  if (sent) {
    return (
      <MessageScreen title="Thank you for your feedback">
        <p role="status">{sentimentLine(sent)}</p>
        {sent.comment && <blockquote class="feedback-comment">{sent.comment}</blockquote>}
      </MessageScreen>
    )
  }

  async function submit(event: Event) {
    event.preventDefault()
    if (rating === 0) {
      setError('Choose a rating from 1 to 5 stars first.')
      return
    }
    setSending(true)
    setError('')
    try {
      setSent((await api.createFeedback(objectType!, id, rating, comment.trim())).feedback)
    } catch (failure) {
      setError(failureText(failure))
    } finally {
      setSending(false)
    }
  }

  return (
    <main class="notice feedback-page">
      <h1>
        How was {word} {id}?
      </h1>
      <form class="feedback-form" onSubmit={submit} noValidate>
        <StarRating
          value={rating}
          onChange={(chosen) => {
            setRating(chosen)
            setError('')
          }}
        />
        <label for="feedback-comment">Comment (optional)</label>
        <textarea
          id="feedback-comment"
          maxLength={4000}
          rows={4}
          value={comment}
          onInput={(event) => setComment(event.currentTarget.value)}
        />
        {error && (
          <p class="form-error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={sending}>
          {sending ? 'Sending…' : 'Send feedback'}
        </button>
      </form>
    </main>
  )
}
