import { foldText } from '../../fold-text.ts'

/** An emoji the picker offers, with the words it is found by (its name first). */
export interface EmojiChoice {
  emoji: string
  name: string
  words: string
}

/** The picker's emoji, in groups; the name is what screen readers say and what search finds. */
export const EMOJI_GROUPS: ReadonlyArray<{ group: string; choices: ReadonlyArray<EmojiChoice> }> = [
  {
    group: 'Smileys',
    choices: [
      ['😀', 'grinning face', 'happy smile'],
      ['😄', 'smiling face with open mouth', 'happy joy'],
      ['😁', 'beaming face', 'grin happy'],
      ['😅', 'grinning face with sweat', 'relief phew'],
      ['😂', 'face with tears of joy', 'laugh lol funny'],
      ['🤣', 'rolling on the floor laughing', 'rofl lol funny'],
      ['🙂', 'slightly smiling face', 'smile'],
      ['😉', 'winking face', 'wink'],
      ['😊', 'smiling face with smiling eyes', 'blush happy'],
      ['😍', 'smiling face with heart eyes', 'love'],
      ['😘', 'face blowing a kiss', 'kiss love'],
      ['😋', 'face savouring food', 'yum tasty'],
      ['😜', 'winking face with tongue', 'joke silly'],
      ['🤔', 'thinking face', 'hmm think'],
      ['🤨', 'face with raised eyebrow', 'doubt sceptical'],
      ['😐', 'neutral face', 'meh'],
      ['🙄', 'face with rolling eyes', 'eye roll'],
      ['😏', 'smirking face', 'smirk'],
      ['😴', 'sleeping face', 'tired zzz'],
      ['😎', 'smiling face with sunglasses', 'cool'],
      ['🤓', 'nerd face', 'geek'],
      ['😕', 'confused face', 'unsure'],
      ['😮', 'face with open mouth', 'wow surprised'],
      ['😳', 'flushed face', 'embarrassed'],
      ['🥺', 'pleading face', 'please'],
      ['😢', 'crying face', 'sad tear'],
      ['😭', 'loudly crying face', 'sob sad'],
      ['😱', 'face screaming in fear', 'scream shock'],
      ['😡', 'pouting face', 'angry mad'],
      ['🤯', 'exploding head', 'mind blown'],
      ['🥳', 'partying face', 'celebrate party'],
      ['🤗', 'hugging face', 'hug'],
    ],
  },
  {
    group: 'Hands',
    choices: [
      ['👍', 'thumbs up', 'yes ok like +1'],
      ['👎', 'thumbs down', 'no dislike -1'],
      ['👏', 'clapping hands', 'applause bravo'],
      ['🙌', 'raising hands', 'hooray celebrate'],
      ['🙏', 'folded hands', 'thanks please pray'],
      ['💪', 'flexed biceps', 'strong muscle'],
      ['👋', 'waving hand', 'hello bye wave'],
      ['👌', 'OK hand', 'ok perfect'],
      ['✌️', 'victory hand', 'peace'],
      ['🤞', 'crossed fingers', 'luck hope'],
      ['🤝', 'handshake', 'deal agree'],
      ['👀', 'eyes', 'look see watching'],
    ],
  },
  {
    group: 'Symbols',
    choices: [
      ['❤️', 'red heart', 'love'],
      ['💔', 'broken heart', 'sad'],
      ['💯', 'hundred points', '100 perfect'],
      ['🔥', 'fire', 'hot lit'],
      ['✨', 'sparkles', 'shiny new'],
      ['⭐', 'star', 'favourite'],
      ['✅', 'check mark', 'done yes tick'],
      ['❌', 'cross mark', 'no wrong'],
      ['❓', 'question mark', 'question'],
      ['❗', 'exclamation mark', 'important'],
      ['⚠️', 'warning', 'caution'],
      ['💡', 'light bulb', 'idea'],
    ],
  },
  {
    group: 'Things',
    choices: [
      ['🎉', 'party popper', 'tada celebrate congratulations'],
      ['🎂', 'birthday cake', 'birthday'],
      ['🎁', 'wrapped gift', 'present'],
      ['🏆', 'trophy', 'win award'],
      ['🚀', 'rocket', 'launch ship fast'],
      ['☕', 'hot beverage', 'coffee tea'],
      ['🍕', 'pizza', 'food lunch'],
      ['🍺', 'beer mug', 'drink cheers'],
      ['📌', 'pushpin', 'pin'],
      ['📎', 'paperclip', 'attachment'],
      ['🐛', 'bug', 'issue insect'],
      ['⏰', 'alarm clock', 'time reminder'],
    ],
  },
].map(({ group, choices }) => ({
  group,
  choices: choices.map(([emoji, name, more]) => ({ emoji: emoji!, name: name!, words: foldText(`${name} ${more}`) })),
}))

/** The emoji whose name or words start with the query's words (each of them), in the picker's order. */
export function findEmoji(query: string): EmojiChoice[] {
  const wanted = foldText(query).split(/\s+/).filter(Boolean)
  const all = EMOJI_GROUPS.flatMap((group) => group.choices)
  if (wanted.length === 0) return all
  return all.filter((choice) => {
    const words = choice.words.split(' ')
    return wanted.every((part) => words.some((word) => word.startsWith(part)))
  })
}
