package tweettext

import "unicode"

// Code points that shape emoji sequences.
const (
	zwj        = 0x200D // zero-width joiner
	zwnj       = 0x200C
	vs15       = 0xFE0E // text presentation selector
	vs16       = 0xFE0F // emoji presentation selector
	keycapMark = 0x20E3 // combining enclosing keycap
	tagCancel  = 0xE007F
	bomChar    = 0xFEFF
	nonChar1   = 0xFFFE
	nonChar2   = 0xFFFF
)

// pictographic approximates Unicode's Extended_Pictographic property: the
// code points that can start (or join) an emoji sequence. The exact border
// only matters for code points whose lone weight differs from an emoji's or
// that take a following selector, modifier or joiner, so the table follows
// emoji-data closely for the BMP and takes whole blocks above it.
var pictographic = &unicode.RangeTable{
	R16: []unicode.Range16{
		{Lo: 0x00A9, Hi: 0x00A9, Stride: 1},
		{Lo: 0x00AE, Hi: 0x00AE, Stride: 1},
		{Lo: 0x203C, Hi: 0x203C, Stride: 1},
		{Lo: 0x2049, Hi: 0x2049, Stride: 1},
		{Lo: 0x2122, Hi: 0x2122, Stride: 1},
		{Lo: 0x2139, Hi: 0x2139, Stride: 1},
		{Lo: 0x2194, Hi: 0x2199, Stride: 1},
		{Lo: 0x21A9, Hi: 0x21AA, Stride: 1},
		{Lo: 0x231A, Hi: 0x231B, Stride: 1},
		{Lo: 0x2328, Hi: 0x2328, Stride: 1},
		{Lo: 0x2388, Hi: 0x2388, Stride: 1},
		{Lo: 0x23CF, Hi: 0x23CF, Stride: 1},
		{Lo: 0x23E9, Hi: 0x23F3, Stride: 1},
		{Lo: 0x23F8, Hi: 0x23FA, Stride: 1},
		{Lo: 0x24C2, Hi: 0x24C2, Stride: 1},
		{Lo: 0x25AA, Hi: 0x25AB, Stride: 1},
		{Lo: 0x25B6, Hi: 0x25B6, Stride: 1},
		{Lo: 0x25C0, Hi: 0x25C0, Stride: 1},
		{Lo: 0x25FB, Hi: 0x25FE, Stride: 1},
		{Lo: 0x2600, Hi: 0x2605, Stride: 1},
		{Lo: 0x2607, Hi: 0x2612, Stride: 1},
		{Lo: 0x2614, Hi: 0x2685, Stride: 1},
		{Lo: 0x2690, Hi: 0x2705, Stride: 1},
		{Lo: 0x2708, Hi: 0x2712, Stride: 1},
		{Lo: 0x2714, Hi: 0x2714, Stride: 1},
		{Lo: 0x2716, Hi: 0x2716, Stride: 1},
		{Lo: 0x271D, Hi: 0x271D, Stride: 1},
		{Lo: 0x2721, Hi: 0x2721, Stride: 1},
		{Lo: 0x2728, Hi: 0x2728, Stride: 1},
		{Lo: 0x2733, Hi: 0x2734, Stride: 1},
		{Lo: 0x2744, Hi: 0x2744, Stride: 1},
		{Lo: 0x2747, Hi: 0x2747, Stride: 1},
		{Lo: 0x274C, Hi: 0x274C, Stride: 1},
		{Lo: 0x274E, Hi: 0x274E, Stride: 1},
		{Lo: 0x2753, Hi: 0x2755, Stride: 1},
		{Lo: 0x2757, Hi: 0x2757, Stride: 1},
		{Lo: 0x2763, Hi: 0x2767, Stride: 1},
		{Lo: 0x2795, Hi: 0x2797, Stride: 1},
		{Lo: 0x27A1, Hi: 0x27A1, Stride: 1},
		{Lo: 0x27B0, Hi: 0x27B0, Stride: 1},
		{Lo: 0x27BF, Hi: 0x27BF, Stride: 1},
		{Lo: 0x2934, Hi: 0x2935, Stride: 1},
		{Lo: 0x2B05, Hi: 0x2B07, Stride: 1},
		{Lo: 0x2B1B, Hi: 0x2B1C, Stride: 1},
		{Lo: 0x2B50, Hi: 0x2B50, Stride: 1},
		{Lo: 0x2B55, Hi: 0x2B55, Stride: 1},
		{Lo: 0x3030, Hi: 0x3030, Stride: 1},
		{Lo: 0x303D, Hi: 0x303D, Stride: 1},
		{Lo: 0x3297, Hi: 0x3297, Stride: 1},
		{Lo: 0x3299, Hi: 0x3299, Stride: 1},
	},
	R32: []unicode.Range32{
		{Lo: 0x1F000, Hi: 0x1F0FF, Stride: 1},
		{Lo: 0x1F10D, Hi: 0x1F10F, Stride: 1},
		{Lo: 0x1F12F, Hi: 0x1F12F, Stride: 1},
		{Lo: 0x1F16C, Hi: 0x1F171, Stride: 1},
		{Lo: 0x1F17E, Hi: 0x1F17F, Stride: 1},
		{Lo: 0x1F18E, Hi: 0x1F18E, Stride: 1},
		{Lo: 0x1F191, Hi: 0x1F19A, Stride: 1},
		{Lo: 0x1F1AD, Hi: 0x1F1E5, Stride: 1},
		{Lo: 0x1F201, Hi: 0x1F20F, Stride: 1},
		{Lo: 0x1F21A, Hi: 0x1F21A, Stride: 1},
		{Lo: 0x1F22F, Hi: 0x1F22F, Stride: 1},
		{Lo: 0x1F232, Hi: 0x1F23A, Stride: 1},
		{Lo: 0x1F23C, Hi: 0x1F23F, Stride: 1},
		{Lo: 0x1F249, Hi: 0x1F3FA, Stride: 1},
		{Lo: 0x1F400, Hi: 0x1F53D, Stride: 1},
		{Lo: 0x1F546, Hi: 0x1F64F, Stride: 1},
		{Lo: 0x1F680, Hi: 0x1F6FF, Stride: 1},
		{Lo: 0x1F774, Hi: 0x1F77F, Stride: 1},
		{Lo: 0x1F7D5, Hi: 0x1F7FF, Stride: 1},
		{Lo: 0x1F80C, Hi: 0x1F80F, Stride: 1},
		{Lo: 0x1F848, Hi: 0x1F84F, Stride: 1},
		{Lo: 0x1F85A, Hi: 0x1F85F, Stride: 1},
		{Lo: 0x1F888, Hi: 0x1F88F, Stride: 1},
		{Lo: 0x1F8AE, Hi: 0x1F8FF, Stride: 1},
		{Lo: 0x1F90C, Hi: 0x1F93A, Stride: 1},
		{Lo: 0x1F93C, Hi: 0x1F945, Stride: 1},
		{Lo: 0x1F947, Hi: 0x1FAFF, Stride: 1},
		{Lo: 0x1FC00, Hi: 0x1FFFD, Stride: 1},
	},
}

// modifierBase lists the emoji that take a skin-tone modifier
// (Emoji_Modifier_Base).
var modifierBase = &unicode.RangeTable{
	R16: []unicode.Range16{
		{Lo: 0x261D, Hi: 0x261D, Stride: 1},
		{Lo: 0x26F9, Hi: 0x26F9, Stride: 1},
		{Lo: 0x270A, Hi: 0x270D, Stride: 1},
	},
	R32: []unicode.Range32{
		{Lo: 0x1F385, Hi: 0x1F385, Stride: 1},
		{Lo: 0x1F3C2, Hi: 0x1F3C4, Stride: 1},
		{Lo: 0x1F3C7, Hi: 0x1F3C7, Stride: 1},
		{Lo: 0x1F3CA, Hi: 0x1F3CC, Stride: 1},
		{Lo: 0x1F442, Hi: 0x1F443, Stride: 1},
		{Lo: 0x1F446, Hi: 0x1F450, Stride: 1},
		{Lo: 0x1F466, Hi: 0x1F478, Stride: 1},
		{Lo: 0x1F47C, Hi: 0x1F47C, Stride: 1},
		{Lo: 0x1F481, Hi: 0x1F483, Stride: 1},
		{Lo: 0x1F485, Hi: 0x1F487, Stride: 1},
		{Lo: 0x1F48F, Hi: 0x1F48F, Stride: 1},
		{Lo: 0x1F491, Hi: 0x1F491, Stride: 1},
		{Lo: 0x1F4AA, Hi: 0x1F4AA, Stride: 1},
		{Lo: 0x1F574, Hi: 0x1F575, Stride: 1},
		{Lo: 0x1F57A, Hi: 0x1F57A, Stride: 1},
		{Lo: 0x1F590, Hi: 0x1F590, Stride: 1},
		{Lo: 0x1F595, Hi: 0x1F596, Stride: 1},
		{Lo: 0x1F645, Hi: 0x1F647, Stride: 1},
		{Lo: 0x1F64B, Hi: 0x1F64F, Stride: 1},
		{Lo: 0x1F6A3, Hi: 0x1F6A3, Stride: 1},
		{Lo: 0x1F6B4, Hi: 0x1F6B6, Stride: 1},
		{Lo: 0x1F6C0, Hi: 0x1F6C0, Stride: 1},
		{Lo: 0x1F6CC, Hi: 0x1F6CC, Stride: 1},
		{Lo: 0x1F90C, Hi: 0x1F90C, Stride: 1},
		{Lo: 0x1F90F, Hi: 0x1F90F, Stride: 1},
		{Lo: 0x1F918, Hi: 0x1F91F, Stride: 1},
		{Lo: 0x1F926, Hi: 0x1F926, Stride: 1},
		{Lo: 0x1F930, Hi: 0x1F939, Stride: 1},
		{Lo: 0x1F93C, Hi: 0x1F93E, Stride: 1},
		{Lo: 0x1F977, Hi: 0x1F977, Stride: 1},
		{Lo: 0x1F9B5, Hi: 0x1F9B6, Stride: 1},
		{Lo: 0x1F9B8, Hi: 0x1F9B9, Stride: 1},
		{Lo: 0x1F9BB, Hi: 0x1F9BB, Stride: 1},
		{Lo: 0x1F9CD, Hi: 0x1F9CF, Stride: 1},
		{Lo: 0x1F9D1, Hi: 0x1F9DD, Stride: 1},
		{Lo: 0x1FAC3, Hi: 0x1FAC5, Stride: 1},
		{Lo: 0x1FAF0, Hi: 0x1FAF8, Stride: 1},
	},
}

func isModifier(r rune) bool          { return r >= 0x1F3FB && r <= 0x1F3FF }
func isRegionalIndicator(r rune) bool { return r >= 0x1F1E6 && r <= 0x1F1FF }
func isTagChar(r rune) bool           { return r >= 0xE0020 && r <= 0xE007E }
func isKeycapBase(r rune) bool        { return r == '#' || r == '*' || (r >= '0' && r <= '9') }

// needsVS16 lists the pictographs that X only treats as emoji when an
// emoji presentation selector follows; on their own they are text symbols
// and weigh as such (© and ® weigh 1).
func needsVS16(r rune) bool {
	return r == 0x00A9 || r == 0x00AE || r == 0x2122 || r == 0x265F
}

// emojiEnd returns the end (exclusive rune index) of the emoji sequence
// starting at rs[i], or i when no emoji starts there. Sequences follow
// UTS #51: keycaps, flag pairs, tag sequences, modifier and presentation
// sequences, and ZWJ chains of those. Unlike the list-based matcher of the
// reference library it accepts well-formed sequences that are newer than
// its list, which X renders as one glyph.
func emojiEnd(rs []rune, i int) int {
	at := func(j int) rune {
		if j < len(rs) {
			return rs[j]
		}
		return -1
	}
	r := rs[i]
	if r < 0xA9 && !isKeycapBase(r) {
		return i // nothing below © starts an emoji
	}
	switch {
	case isKeycapBase(r):
		j := i + 1
		if at(j) == vs16 {
			j++
		}
		if at(j) == keycapMark {
			return j + 1
		}
		return i
	case isRegionalIndicator(r):
		if isRegionalIndicator(at(i + 1)) {
			return i + 2
		}
		return i + 1
	case r == vs16, isModifier(r):
		// A stray selector or modifier is matched on its own, as the
		// reference does; it weighs the same either way.
		return i + 1
	}
	end := emojiElementEnd(rs, i)
	if end == i {
		return i
	}
	for at(end) == zwj {
		next := emojiElementEnd(rs, end+1)
		if next == end+1 {
			break
		}
		end = next
	}
	return end
}

// emojiElementEnd matches one pictograph with its optional presentation
// selector, skin-tone modifier and tag sequence.
func emojiElementEnd(rs []rune, i int) int {
	if i >= len(rs) || !unicode.Is(pictographic, rs[i]) {
		return i
	}
	at := func(j int) rune {
		if j < len(rs) {
			return rs[j]
		}
		return -1
	}
	r := rs[i]
	j := i + 1
	if needsVS16(r) {
		if at(j) != vs16 {
			return i
		}
		return j + 1
	}
	switch {
	case at(j) == vs15:
		// The writer asked for the text glyph.
		return i
	case at(j) == vs16:
		j++
	case isModifier(at(j)) && unicode.Is(modifierBase, r):
		j++
	}
	if isTagChar(at(j)) {
		k := j
		for isTagChar(at(k)) {
			k++
		}
		if at(k) == tagCancel {
			j = k + 1
		}
	}
	return j
}

// emojiSpans returns [start, end) rune ranges of every emoji sequence, left
// to right without overlap.
func emojiSpans(rs []rune) [][2]int {
	var spans [][2]int
	for i := 0; i < len(rs); {
		if e := emojiEnd(rs, i); e > i {
			spans = append(spans, [2]int{i, e})
			i = e
			continue
		}
		i++
	}
	return spans
}
