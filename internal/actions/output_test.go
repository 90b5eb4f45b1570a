package actions

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestEveryMutationReturnsItsDeclaredOutput runs each mutation once against
// the emulator and checks that the data it returns is of the type its
// definition declares, so Mutation.Output cannot drift from the truth.
func TestEveryMutationReturnsItsDeclaredOutput(t *testing.T) {
	e := newXEnv(t)
	foreign := e.otherTweets(3)
	user := e.otherUser()
	own := e.do("x_post_tweet", PostParams{Text: "to be deleted by the output check"}).Result.(PostedTweet).ID
	rawOwn := e.do("x_post_tweet", PostParams{Text: "to be deleted raw by the output check"}).Result.(PostedTweet).ID
	list := e.do("x_list_create", ListCreateParams{Name: "output members"}).Result.(CreatedList).ID
	doomed := e.do("x_list_create", ListCreateParams{Name: "output delete"}).Result.(CreatedList).ID
	toEdit := e.do("x_post_tweet", PostParams{Text: "to be edited by the output check"}).Result.(PostedTweet).ID
	dm := e.do("x_send_dm", DMParams{ParticipantID: user, Text: "to be deleted by the output check"}).Result.(SentDM).DMEventID
	dir := e.mediaDir()
	var img bytes.Buffer
	if err := png.Encode(&img, image.NewRGBA(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	pic := filepath.Join(dir, "output.png")
	if err := os.WriteFile(pic, img.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	args := map[string]any{
		"x_post_tweet":            PostInput{Text: "output check"},
		"x_reply_to_tweet":        ReplyInput{Text: "output reply", InReplyToID: foreign[0]},
		"x_quote_tweet":           QuoteInput{Text: "output quote", QuotedTweetID: foreign[1]},
		"x_delete_tweet":          TweetIDParams{TweetID: own},
		"x_edit_tweet":            EditParams{TweetID: toEdit, Text: "edited by the output check"},
		"x_post_thread":           ThreadParams{Tweets: []string{"output thread one", "output thread two"}},
		"x_upload_media":          UploadInput{FilePath: pic, AltText: "a square"},
		"x_upload_media_from_url": UploadURLInput{URL: e.mediaURL + "/pic.png", AltText: "a grey square"},
		"x_post":                  RawWriteInput{RawRequestInput: RawRequestInput{Path: "/2/tweets"}, Body: `{"text":"raw output check"}`},
		"x_put":                   RawWriteInput{RawRequestInput: RawRequestInput{Path: "/2/tweets/" + foreign[2] + "/hidden"}, Body: `{"hidden":true}`},
		"x_delete":                RawRequestInput{Path: "/2/tweets/" + rawOwn},
		"x_list_create":           ListCreateParams{Name: "output check", Private: true},
		"x_list_delete":           ListIDParams{ListID: doomed},
		"x_list_add_member":       ListMemberParams{ListID: list, UserID: user},
		"x_list_remove_member":    ListMemberParams{ListID: list, UserID: user},
		"x_send_dm":               DMParams{ParticipantID: user, Text: "output check message"},
		"x_delete_dm":             DMEventIDParams{DMEventID: dm},
	}
	for _, m := range Mutations() {
		in, ok := args[m.Name]
		if !ok {
			switch m.Input {
			case reflect.TypeFor[TweetIDParams]():
				in = TweetIDParams{TweetID: foreign[2]}
			case reflect.TypeFor[UserIDParams]():
				in = UserIDParams{TargetUserID: user}
			default:
				t.Errorf("%s: no sample arguments of type %s; add them here", m.Name, m.Input)
				continue
			}
		}
		params, err := m.Prepare(in, Env{MediaDirs: []string{dir}})
		if err != nil {
			t.Fatalf("%s: prepare %+v: %v", m.Name, in, err)
		}
		r := e.do(m.Name, params)
		if got := reflect.TypeOf(r.Result); got != m.Output {
			t.Errorf("%s returned %v, its definition declares %v", m.Name, got, m.Output)
		}
	}
}
