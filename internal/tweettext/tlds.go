package tweettext

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// The TLD tables below are hand-written from the IANA root zone database.
// twitter-text only treats a host as a URL when it ends in a known TLD, so a
// TLD missing here makes a link count by its characters instead of 23.

// countryTLDs holds the two-letter country codes delegated in the root zone
// (plus the few reserved codes twitter-text also accepts) and the
// internationalised country TLDs in their Unicode form.
const countryTLDs = `
ac ad ae af ag ai al am an ao aq ar as at au aw ax az
ba bb bd be bf bg bh bi bj bl bm bn bo bq br bs bt bv bw by bz
ca cc cd cf cg ch ci ck cl cm cn co cr cu cv cw cx cy cz
de dj dk dm do dz ec ee eg eh er es et eu fi fj fk fm fo fr
ga gb gd ge gf gg gh gi gl gm gn gp gq gr gs gt gu gw gy
hk hm hn hr ht hu id ie il im in io iq ir is it je jm jo jp
ke kg kh ki km kn kp kr kw ky kz la lb lc li lk lr ls lt lu lv ly
ma mc md me mf mg mh mk ml mm mn mo mp mq mr ms mt mu mv mw mx my mz
na nc ne nf ng ni nl no np nr nu nz om
pa pe pf pg ph pk pl pm pn pr ps pt pw py qa re ro rs ru rw
sa sb sc sd se sg sh si sj sk sl sm sn so sr ss st su sv sx sy sz
tc td tf tg th tj tk tl tm tn to tp tr tt tv tw tz ua ug uk um us uy uz
va vc ve vg vi vn vu wf ws ye yt za zm zw
中国 中國 香港 澳門 台湾 台灣 新加坡 한국
рф срб укр бел қаз мкд мон бг ею ελ ευ
ไทย ລາວ ලංකා இலங்கை சிங்கப்பூர் இந்தியா
भारत भारतम् भारोत ভারত ভাৰত ਭਾਰਤ ભારત ଭାରତ భారత్ ಭಾರತ ഭാരതം বাংলা
بھارت ڀارت بارت مصر السعودية امارات الاردن المغرب الجزائر تونس قطر عمان
فلسطين سورية ایران پاکستان عراق البحرين سودان مليسيا موريتانيا
გე հայ
`

// genericTLDs holds the generic TLDs: the legacy ones, the open new gTLDs
// and the brand TLDs in common use, ASCII and internationalised.
const genericTLDs = `
com net org info biz name pro aero asia cat coop edu gov int jobs mil mobi
museum post tel travel xxx arpa
abbott abc able abogado academy accountant accountants aco actor adult aeg
afl africa agency aig airbus airforce airtel akdn alibaba alipay allfinanz
ally alsace americanexpress amex amfam amica amsterdam analytics
android anquan anz aol apartments app apple aquarelle arab aramco archi army
art associates athleta attorney auction audi audible audio auspost author
auto autos aws axa azure
baby baidu banamex band bank bar barcelona barclaycard barclays bargains
baseball basketball bauhaus bayern bbc bbt bbva bcg bcn beats beauty beer
bentley berlin best bestbuy bet bharti bible bid bike bing bingo bio black
blackfriday blockbuster blog bloomberg blue bms bmw bnpparibas boats
boehringer bofa bom bond boo book booking bosch bostik boston bot boutique
box bradesco bridgestone broadway broker brother brussels build builders
business buy buzz bzh
cab cafe cal call calvinklein cam camera camp canon capetown capital
capitalone car caravan cards care career careers cars casa case cash casino
catering catholic cba cbn cbre center ceo cern cfa cfd chanel channel
charity chase chat cheap chintai christmas chrome church cipriani circle
cisco citadel citi citic city claims cleaning click clinic clinique clothing
cloud club clubmed coach codes coffee college cologne commbank community
company compare computer comsec condos construction consulting contact
contractors cooking cool corsica country coupon coupons courses cpa credit
creditcard creditunion cricket crown crs cruise cruises cuisinella cymru
cyou
dad dance data date dating datsun day dclk dds deal dealer deals degree
delivery dell deloitte delta democrat dental dentist desi design dev dhl
diamonds diet digital direct directory discount discover dish diy dnp docs
doctor dog domains dot download drive dtv dubai dunlop dupont durban dvag
dvr
earth eat eco edeka education email emerck energy engineer engineering
enterprises epson equipment ericsson erni esq estate eurovision eus events
exchange expert exposed express extraspace
fage fail fairwinds faith family fan fans farm farmers fashion fast fedex
feedback ferrari ferrero fidelity fido film final finance financial fire
firestone firmdale fish fishing fit fitness flickr flights flir florist
flowers fly foo food football ford forex forsale forum foundation fox free
fresenius frl frogans frontier ftr fujitsu fun fund furniture futbol fyi
gal gallery gallo gallup game games gap garden gay gbiz gdn gea gent genting
george ggee gift gifts gives giving glass gle global globo gmail gmbh gmo
gmx godaddy gold goldpoint golf goo goodyear goog google gop got grainger
graphics gratis green gripe grocery group gucci guge guide guitars guru
hair hamburg hangout haus hbo hdfc hdfcbank health healthcare help helsinki
here hermes hiphop hisamitsu hitachi hiv hkt hockey holdings holiday
homedepot homegoods homes homesense honda horse hospital host hosting hot
hotels hotmail house how hsbc hughes hyatt hyundai
ibm icbc ice icu ieee ifm ikano imamat imdb immo immobilien inc industries
infiniti ing ink institute insurance insure international intuit
investments ipiranga irish ismaili ist istanbul itau itv
jaguar java jcb jeep jetzt jewelry jio jll jmp jnj joburg jot joy jpmorgan
jprs juegos juniper
kaufen kddi kerryhotels kerryproperties kfh kia kim kindle kitchen kiwi
koeln komatsu kosher kpmg kpn krd kred kuokgroup kyoto
lacaixa lamborghini lamer land landrover lanxess lasalle lat latino latrobe
law lawyer lds lease leclerc lefrak legal lego lexus lgbt lidl life
lifeinsurance lifestyle lighting like lilly limited limo lincoln link live
living llc llp loan loans locker locus lol london lotte lotto love lpl
lplfinancial ltd ltda lundbeck luxe luxury
madrid maif maison makeup man management mango map market marketing markets
marriott marshalls mattel mba mckinsey med media meet melbourne meme
memorial men menu merckmsd miami microsoft mini mint mit mitsubishi mlb mls
mma mobile moda moe moi mom monash money monster mormon mortgage moscow moto
motorcycles mov movie msd mtn mtr
nab nagoya natura navy nba nec netbank netflix network neustar new news
next nextdirect nexus nfl ngo nhk nico nike nikon ninja nissan nissay nokia
norton now nowruz nowtv nra nrw ntt nyc
obi observer office okinawa olayan olayangroup ollo omega one ong onl online
ooo open oracle orange organic origins osaka otsuka ott ovh
page panasonic paris pars partners parts party pay pccw pet pfizer pharmacy
phd philips phone photo photography photos physio pics pictet pictures pid
pin ping pink pioneer pizza place play playstation plumbing plus pnc pohl
poker politie porn pramerica praxi press prime prod productions prof
progressive promo properties property protection pru prudential pub pwc
qpon quebec quest
racing radio read realestate realtor realty recipes red redumbrella rehab
reise reisen reit reliance ren rent rentals repair report republican rest
restaurant review reviews rexroth rich richardli ricoh ril rio rip rocks
rodeo rogers room rsvp rugby ruhr run rwe ryukyu
saarland safe safety sakura sale salon samsclub samsung sandvik
sandvikcoromant sanofi sap sarl sas save saxo sbi sbs scb schaeffler schmidt
scholarships school schule schwarz science scot search seat secure security
seek select sener services seven sew sex sexy sfr shangrila sharp shell
shia shiksha shoes shop shopping shouji show silk sina singles site ski skin
sky skype sling smart smile sncf soccer social softbank software sohu solar
solutions song sony soy space sport spot srl stada staples star
statebank statefarm stc stcgroup stockholm storage store stream studio
study style sucks supplies supply support surf surgery suzuki swatch swiss
sydney systems
tab taipei talk taobao target tatamotors tatar tattoo tax taxi tci tdk team
tech technology temasek tennis teva thd theater theatre tiaa tickets tienda
tips tires tirol tjmaxx tjx tkmaxx tmall today tokyo tools top toray
toshiba total tours town toyota toys trade trading training travelers
travelersinsurance trust trv tube tui tunes tushu tvs
ubank ubs unicom university uno uol ups
vacations vana vanguard vegas ventures verisign versicherung vet viajes
video vig viking villas vin vip virgin visa vision viva vivo vlaanderen
vodka volvo vote voting voto voyage
wales walmart walter wang wanggou watch watches weather weatherchannel
webcam weber website wed wedding weibo weir whoswho wien wiki williamhill
win windows wine winners wme wolterskluwer woodside work works world wow
wtc wtf
xbox xerox xihuan xin xyz
yachts yahoo yamaxun yandex yodobashi yoga yokohama you youtube yun
zappos zara zero zip zone zuerich
在线 网址 中文网 公司 网络 商城 商标 商店 游戏 娱乐 企业 集团 手机 世界
移动 购物 我爱你 信息 机构 组织机构 八卦 网店 网站 广东 佛山 时尚 微博
点看 慈善 政务 健康 招聘 天主教 大众汽车 谷歌 淡马锡 嘉里
嘉里大酒店 香格里拉 工行 飞利浦 诺基亚 联通 通販 グーグル
みんな コム ストア クラウド セール ファッション ポイント
닷컴 닷넷 삼성 онлайн сайт дети орг ком москва рус католик
संगठन कॉम नेट شبكة موقع بيتك عرب كوم ابوظبي همراه كاثوليك
קום
`

// tldTables are the TLD sets and the length in runes of the longest TLD.
type tldTables struct {
	cc, g  map[string]struct{}
	maxLen int
}

// tlds builds the tables on first use and only reads them afterwards: a
// process that never measures a text (most commands, most MCP sessions)
// never holds them.
var tlds = sync.OnceValue(func() *tldTables {
	t := &tldTables{cc: tldSet(countryTLDs), g: tldSet(genericTLDs)}
	t.maxLen = longestTLD(t.cc, t.g)
	return t
})

func tldSet(list string) map[string]struct{} {
	fields := strings.Fields(list)
	m := make(map[string]struct{}, len(fields))
	for _, f := range fields {
		m[strings.ToLower(f)] = struct{}{}
	}
	return m
}

func longestTLD(sets ...map[string]struct{}) int {
	n := 0
	for _, s := range sets {
		for k := range s {
			n = max(n, utf8.RuneCountInString(k))
		}
	}
	return n
}

// isKnownTLD reports whether s (already lower-case) is a TLD in either table.
func isKnownTLD(s string) bool {
	t := tlds()
	if _, ok := t.g[s]; ok {
		return true
	}
	_, ok := t.cc[s]
	return ok
}

// isTLDRune reports whether r can appear in a TLD: letters and the combining
// marks of Indic and Thai scripts.
func isTLDRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsMark(r)
}
