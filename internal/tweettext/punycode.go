package tweettext

import "strings"

// Punycode (RFC 3492) parameters.
const (
	pcBase        = 36
	pcTMin        = 1
	pcTMax        = 26
	pcSkew        = 38
	pcDamp        = 700
	pcInitialBias = 72
	pcInitialN    = 128
	pcMaxInt      = 1<<31 - 1
)

// punycodeEncode encodes a label per RFC 3492 without the "xn--" prefix.
// ok is false when the deltas overflow, which only very long labels reach.
func punycodeEncode(label []rune) (string, bool) {
	var out strings.Builder
	basic := 0
	for _, r := range label {
		if r < 0x80 {
			out.WriteRune(r)
			basic++
		}
	}
	h := basic
	if basic > 0 {
		out.WriteByte('-')
	}
	n, delta, bias := pcInitialN, 0, pcInitialBias
	for h < len(label) {
		m := pcMaxInt
		for _, r := range label {
			if int(r) >= n && int(r) < m {
				m = int(r)
			}
		}
		if (m - n) > (pcMaxInt-delta)/(h+1) {
			return "", false
		}
		delta += (m - n) * (h + 1)
		n = m
		for _, r := range label {
			c := int(r)
			if c < n {
				delta++
				if delta > pcMaxInt-1 {
					return "", false
				}
			}
			if c != n {
				continue
			}
			q := delta
			for k := pcBase; ; k += pcBase {
				t := k - bias
				if t < pcTMin {
					t = pcTMin
				} else if t > pcTMax {
					t = pcTMax
				}
				if q < t {
					break
				}
				out.WriteByte(punycodeDigit(t + (q-t)%(pcBase-t)))
				q = (q - t) / (pcBase - t)
			}
			out.WriteByte(punycodeDigit(q))
			bias = punycodeAdapt(delta, h+1, h == basic)
			delta = 0
			h++
		}
		delta++
		n++
	}
	return out.String(), true
}

func punycodeDigit(d int) byte {
	if d < 26 {
		return byte('a' + d)
	}
	return byte('0' + d - 26)
}

func punycodeAdapt(delta, numPoints int, first bool) int {
	if first {
		delta /= pcDamp
	} else {
		delta /= 2
	}
	delta += delta / numPoints
	k := 0
	for delta > ((pcBase-pcTMin)*pcTMax)/2 {
		delta /= pcBase - pcTMin
		k += pcBase
	}
	return k + (pcBase-pcTMin+1)*delta/(delta+pcSkew)
}

// asciiLabelLen is the length of one DNS label after IDNA ToASCII, the way
// the reference computes it: ASCII labels stay as they are, others become
// "xn--" plus their Punycode. The ideographic full stops also split labels.
// ok is false when the label cannot be encoded.
func asciiLabelLen(label []rune) (int, bool) {
	total := 0
	start := 0
	for i := 0; i <= len(label); i++ {
		if i < len(label) && !isLabelSeparator(label[i]) {
			continue
		}
		n, ok := asciiPartLen(label[start:i])
		if !ok {
			return 0, false
		}
		total += n
		if i < len(label) {
			total++ // the separator becomes "."
		}
		start = i + 1
	}
	return total, true
}

func asciiPartLen(part []rune) (int, bool) {
	for _, r := range part {
		if r >= 0x80 {
			// Every code point adds at least one output character, so a
			// part this long can never fit a 63-character label; skip the
			// encoding (and its overflow) altogether.
			if len(part) > maxLabelLen {
				return len(part) + 4, true
			}
			enc, ok := punycodeEncode(part)
			if !ok {
				return 0, false
			}
			return len(enc) + 4, true
		}
	}
	return len(part), true
}

func isLabelSeparator(r rune) bool {
	return r == '.' || r == 0x3002 || r == 0xFF0E || r == 0xFF61
}
