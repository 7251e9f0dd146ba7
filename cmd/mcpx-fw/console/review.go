package console

import (
	"net/http"
	"net/url"
)

// reviewView is the review page's data: the item, its cost, and after a
// refused action the refusal and what the operator had typed, so that
// nothing they wrote is lost and the item is shown still pending.
type reviewView struct {
	Review
	Cost    Cost
	CostErr bool
	Error   string
	Doc     string // the edit box's content: the item's document or the operator's edit
}

func (s *Server) reviewPage(w http.ResponseWriter, r *http.Request, csrf string) {
	s.showReview(w, r, csrf, http.StatusOK, "", "")
}

// showReview renders the item with refusal (if any) above the actions and
// doc (if not "") in the edit box in place of the item's document.
func (s *Server) showReview(w http.ResponseWriter, r *http.Request, csrf string, status int, refusal, doc string) {
	id := r.PathValue("id")
	rv, err := s.actions.Review(r.Context(), id)
	if err != nil {
		http.Error(w, "no such review", http.StatusNotFound)
		return
	}
	v := reviewView{Review: rv, Error: refusal, Doc: rv.Doc}
	if doc != "" {
		v.Doc = doc
	}
	v.Cost, err = s.actions.Cost(r.Context(), id)
	v.CostErr = err != nil
	render(w, status, func(m *markup) { reviewPage(m, csrf, v) })
}

// decided answers an action: back to the review page, which shows the
// decision, or the page again with the refusal in place.
func (s *Server) decided(w http.ResponseWriter, r *http.Request, csrf string, err error, doc string) {
	if err != nil {
		s.showReview(w, r, csrf, http.StatusConflict, err.Error(), doc)
		return
	}
	http.Redirect(w, r, "/review/"+url.PathEscape(r.PathValue("id")), http.StatusSeeOther)
}

func (s *Server) approve(w http.ResponseWriter, r *http.Request, csrf string) {
	doc := r.PostFormValue("doc")
	s.decided(w, r, csrf, s.actions.Approve(r.Context(), r.PathValue("id"), doc, r.PostFormValue("note")), doc)
}

func (s *Server) reject(w http.ResponseWriter, r *http.Request, csrf string) {
	s.decided(w, r, csrf, s.actions.Reject(r.Context(), r.PathValue("id"), r.PostFormValue("reason")), "")
}

func (s *Server) answer(w http.ResponseWriter, r *http.Request, csrf string) {
	s.decided(w, r, csrf, s.actions.Answer(r.Context(), r.PathValue("id"), r.PostFormValue("text"), r.PostFormValue("note")), "")
}
