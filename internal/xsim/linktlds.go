package xsim

import (
	"strings"
	"sync"
)

// The TLDs the emulator's link finder knows: the country codes in use and
// the generic TLDs most posts link to. twitter-text knows about 1,500; a
// link on a TLD missing here counts by its characters instead of 23, which
// only matters for a post near the limit that links to such a domain.
// Each set is built when the emulator first counts a link.
var genericTLDs = sync.OnceValue(func() map[string]bool {
	return wordSet(`
	aero app art asia biz blog cat cloud club com coop design dev edu email gov info int
	jobs link live media mil mobi museum name net network news online org page post pro shop
	site social space store studio tech tel today travel world xyz zone`)
})

var countryTLDs = sync.OnceValue(func() map[string]bool {
	return wordSet(`
	ac ad ae af ag ai al am ao aq ar as at au aw ax az ba bb bd be bf bg bh bi bj bm bn bo br
	bs bt bv bw by bz ca cc cd cf cg ch ci ck cl cm cn co cr cu cv cw cx cy cz de dj dk dm do
	dz ec ee eg er es et eu fi fj fk fm fo fr ga gb gd ge gf gg gh gi gl gm gn gp gq gr gs gt
	gu gw gy hk hm hn hr ht hu id ie il im in io iq ir is it je jm jo jp ke kg kh ki km kn kp
	kr kw ky kz la lb lc li lk lr ls lt lu lv ly ma mc md me mg mh mk ml mm mn mo mp mq mr ms
	mt mu mv mw mx my mz na nc ne nf ng ni nl no np nr nu nz om pa pe pf pg ph pk pl pm pn pr
	ps pt pw py qa re ro rs ru rw sa sb sc sd se sg sh si sj sk sl sm sn so sr ss st su sv sx
	sy sz tc td tf tg th tj tk tl tm tn to tr tt tv tw tz ua ug uk us uy uz va vc ve vg vi vn
	vu wf ws ye yt za zm zw
	рф срб укр бел қаз мон ελ 中国 中國 台灣 台湾 香港 新加坡 한국 ไทย भारत
	پاکستان ایران السعودية امارات مصر`)
})

func wordSet(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}
