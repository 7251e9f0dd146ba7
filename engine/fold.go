package engine

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// A keyword rule reads code points; a model and a person read glyphs. Text
// can put a word in front of both while hiding it from the rule: split by
// a zero-width space ("pass\u200bword"), spelt with look-alike letters
// ("pаssword" with a Cyrillic а), in fullwidth or mathematical letters, or
// in Unicode tag characters, which render as nothing but which models
// read as the ASCII they shadow. foldText undoes these, so the policy can
// match the words a reader sees (facts.folded_texts) and see text no
// reader sees (facts.hidden_text).

// foldText returns s as a reader sees it, for keyword rules: compatibility
// forms replaced (NFKC: fullwidth, ligatures, mathematical letters),
// default-ignorable code points removed, and the Cyrillic, Greek and Latin
// letters that look like ASCII ones replaced by those. hidden is the ASCII
// that tag characters in s spell, outside emoji flag sequences (which are
// made of tag characters legitimately). ASCII text is returned as it is.
func foldText(s string) (folded, hidden string) {
	if isASCII(s) {
		return s, ""
	}
	var out, tags strings.Builder
	out.Grow(len(s))
	inFlag := false
	for _, r := range norm.NFKC.String(s) {
		switch {
		case r == wavingBlackFlag:
			inFlag = true
			out.WriteRune(r)
		case isTag(r):
			if r == cancelTag {
				inFlag = false
			} else if !inFlag && r >= tagSpace && r <= tagTilde {
				tags.WriteByte(byte(r - tagBase))
			}
		case isDefaultIgnorable(r):
		default:
			inFlag = false
			if ascii, ok := confusables[r]; ok {
				r = ascii
			}
			out.WriteRune(r)
		}
	}
	return out.String(), tags.String()
}

// isASCII reports whether s is all ASCII, eight bytes at a time.
func isASCII(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if (uint64(s[i])|uint64(s[i+1])<<8|uint64(s[i+2])<<16|uint64(s[i+3])<<24|
			uint64(s[i+4])<<32|uint64(s[i+5])<<40|uint64(s[i+6])<<48|uint64(s[i+7])<<56)&0x8080808080808080 != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// Tag characters (U+E0000-U+E007F): U+E0020-U+E007E shadow ASCII space to
// tilde; an emoji flag sequence is the waving black flag, tag letters and
// U+E007F CANCEL TAG.
const (
	tagBase         = 0xE0000
	tagSpace        = tagBase + ' '
	tagTilde        = tagBase + '~'
	cancelTag       = 0xE007F
	wavingBlackFlag = 0x1F3F4
)

func isTag(r rune) bool { return r >= tagBase && r <= cancelTag }

// isDefaultIgnorable reports Unicode's Default_Ignorable_Code_Point
// property (DerivedCoreProperties.txt): code points that render as
// nothing unless a renderer supports them, such as zero-width spaces and
// joiners, the soft hyphen, direction marks and variation selectors.
func isDefaultIgnorable(r rune) bool {
	switch {
	case r < 0xAD:
		return false
	case r == 0xAD, r == 0x34F, r == 0x61C, r == 0x115F, r == 0x1160, r == 0x17B4, r == 0x17B5,
		r == 0x3164, r == 0xFEFF, r == 0xFFA0:
		return true
	case r >= 0x180B && r <= 0x180F, r >= 0x200B && r <= 0x200F, r >= 0x202A && r <= 0x202E,
		r >= 0x2060 && r <= 0x206F, r >= 0xFE00 && r <= 0xFE0F, r >= 0x1BCA0 && r <= 0x1BCA3,
		r >= 0x1D173 && r <= 0x1D17A, r >= 0xE0000 && r <= 0xE0FFF:
		return true
	}
	return false
}

// confusables maps letters of other scripts that are drawn like ASCII
// letters in common fonts to those letters: the part of Unicode's
// confusables data (UTS #39) that can spell an English keyword.
var confusables = map[rune]rune{
	// Cyrillic
	'а': 'a', 'в': 'b', 'е': 'e', 'һ': 'h', 'і': 'i', 'ј': 'j', 'к': 'k', 'ӏ': 'l', 'м': 'm',
	'н': 'h', 'о': 'o', 'р': 'p', 'ԛ': 'q', 'ѕ': 's', 'т': 't', 'с': 'c', 'у': 'y', 'х': 'x',
	'ԁ': 'd', 'ԝ': 'w', 'ү': 'y',
	'А': 'A', 'В': 'B', 'Е': 'E', 'Һ': 'H', 'І': 'I', 'Ј': 'J', 'К': 'K', 'Ӏ': 'I', 'М': 'M',
	'Н': 'H', 'О': 'O', 'Р': 'P', 'Ԛ': 'Q', 'Ѕ': 'S', 'Т': 'T', 'С': 'C', 'У': 'Y', 'Х': 'X',
	'Ԝ': 'W', 'Ү': 'Y',
	// Greek
	'α': 'a', 'ε': 'e', 'ι': 'i', 'κ': 'k', 'ν': 'v', 'ο': 'o', 'ρ': 'p', 'τ': 't', 'υ': 'u',
	'χ': 'x', 'γ': 'y',
	'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Ζ': 'Z', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M', 'Ν': 'N',
	'Ο': 'O', 'Ρ': 'P', 'Τ': 'T', 'Υ': 'Y', 'Χ': 'X',
	// Latin letters outside ASCII drawn as ASCII ones
	'ı': 'i', 'ȷ': 'j', 'ɑ': 'a', 'ɡ': 'g', 'ꜱ': 's', 'ᴄ': 'c', 'ᴏ': 'o', 'ᴘ': 'p', 'ᴋ': 'k',
	'ᴛ': 't', 'ᴜ': 'u', 'ᴠ': 'v', 'ᴡ': 'w', 'ᴢ': 'z',
}
