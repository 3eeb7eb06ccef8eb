import assert from 'node:assert/strict'
import { test } from 'node:test'
import { COLUMNS, gridMove, gridSlots } from './emoji-grid.ts'

test('the recent emoji fill the first row and the others start on a row of their own', () => {
  assert.equal(COLUMNS, 8)
  assert.deepEqual(gridSlots(0, 3), [0, 1, 2])
  assert.deepEqual(gridSlots(3, 10), [0, 1, 2, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17])
  assert.deepEqual(gridSlots(8, 1), [0, 1, 2, 3, 4, 5, 6, 7, 8])
})

test('the arrow keys move in reading order and by columns, to a shorter row’s last emoji', () => {
  // Three recent emoji (indexes 0–2) above twenty others (3–22: rows of 8, 8 and 4).
  const slots = gridSlots(3, 20)
  assert.equal(gridMove(slots, 2, 'ArrowRight'), 3, 'from the recent row into the next')
  assert.equal(gridMove(slots, 3, 'ArrowLeft'), 2)
  assert.equal(gridMove(slots, 1, 'ArrowDown'), 4, 'the same column below')
  assert.equal(gridMove(slots, 4, 'ArrowUp'), 1)
  assert.equal(gridMove(slots, 9, 'ArrowUp'), 2, 'column 6 above a row of three: its last')
  assert.equal(gridMove(slots, 10, 'ArrowDown'), 18, 'column 7 of a full row')
  assert.equal(gridMove(slots, 18, 'ArrowDown'), 22, 'to the last row, shorter: its last')
  assert.equal(gridMove(slots, 22, 'ArrowDown'), 22, 'nothing below')
  assert.equal(gridMove(slots, 0, 'ArrowUp'), 'field', 'above the first row: the search field')
  assert.equal(gridMove(slots, 22, 'ArrowRight'), 22)
  assert.equal(gridMove(slots, 0, 'ArrowLeft'), 0)
  assert.equal(gridMove(slots, 12, 'Home'), 0)
  assert.equal(gridMove(slots, 5, 'End'), 22)
  assert.equal(gridMove(slots, 5, 'Enter'), undefined)
})
