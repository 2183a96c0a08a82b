package promtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Series is one series of a query's answer: its labels, and its value (an
// instant query's) or the number of points it has (a range query's).
type Series struct {
	Labels map[string]string
	Value  float64
	Points int
}

// apiResponse is the envelope of every answer of the HTTP API.
type apiResponse struct {
	Status    string          `json:"status"`
	Data      json.RawMessage `json:"data"`
	ErrorType string          `json:"errorType"`
	Error     string          `json:"error"`
}

// get calls the API at path with query parameters q and decodes its data
// into v.
func (s *Server) get(ctx context.Context, path string, q url.Values, v any) error {
	req, err := http.NewRequestWithContext(ctx, "GET", s.URL()+path+"?"+q.Encode(), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var r apiResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return fmt.Errorf("promtest: %s: %s: %w\n%s", path, resp.Status, err, body)
	}
	if r.Status != "success" {
		return fmt.Errorf("promtest: %s %s: %s: %s", path, q.Encode(), r.ErrorType, r.Error)
	}
	return json.Unmarshal(r.Data, v)
}

// Query runs an instant query (a vector or scalar result) at the current
// time.
func (s *Server) Query(ctx context.Context, expr string) ([]Series, error) {
	var data struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	}
	if err := s.get(ctx, "/api/v1/query", url.Values{"query": {expr}}, &data); err != nil {
		return nil, err
	}
	switch data.ResultType {
	case "vector":
		var vs []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		}
		if err := json.Unmarshal(data.Result, &vs); err != nil {
			return nil, err
		}
		out := make([]Series, len(vs))
		for i, v := range vs {
			out[i] = Series{Labels: v.Metric, Value: number(v.Value[1]), Points: 1}
		}
		return out, nil
	case "scalar":
		var v [2]any
		if err := json.Unmarshal(data.Result, &v); err != nil {
			return nil, err
		}
		return []Series{{Value: number(v[1]), Points: 1}}, nil
	}
	return nil, fmt.Errorf("promtest: query %q: result type %s", expr, data.ResultType)
}

// QueryRange runs a range query over [start, end] at step.
func (s *Server) QueryRange(ctx context.Context, expr string, start, end time.Time, step time.Duration) ([]Series, error) {
	var data struct {
		Result []struct {
			Metric map[string]string `json:"metric"`
			Values [][2]any          `json:"values"`
		} `json:"result"`
	}
	q := url.Values{"query": {expr}, "start": {unix(start)}, "end": {unix(end)}, "step": {strconv.FormatFloat(step.Seconds(), 'f', -1, 64)}}
	if err := s.get(ctx, "/api/v1/query_range", q, &data); err != nil {
		return nil, err
	}
	out := make([]Series, len(data.Result))
	for i, r := range data.Result {
		out[i] = Series{Labels: r.Metric, Points: len(r.Values)}
		if n := len(r.Values); n > 0 {
			out[i].Value = number(r.Values[n-1][1])
		}
	}
	return out, nil
}

// Rule is an alerting or recording rule as the server evaluates it.
type Rule struct {
	Group          string
	Name           string    `json:"name"`
	Type           string    `json:"type"`   // "alerting" or "recording"
	Health         string    `json:"health"` // "ok", "err" or "unknown"
	LastError      string    `json:"lastError"`
	State          string    `json:"state"` // alerting: "inactive", "pending" or "firing"
	LastEvaluation time.Time `json:"lastEvaluation"`
	Alerts         []struct {
		Labels map[string]string `json:"labels"`
		State  string            `json:"state"`
	} `json:"alerts"`
}

// Rules returns every rule the server has loaded.
func (s *Server) Rules(ctx context.Context) ([]Rule, error) {
	var data struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []Rule `json:"rules"`
		} `json:"groups"`
	}
	if err := s.get(ctx, "/api/v1/rules", url.Values{}, &data); err != nil {
		return nil, err
	}
	var out []Rule
	for _, g := range data.Groups {
		for _, r := range g.Rules {
			r.Group = g.Name
			out = append(out, r)
		}
	}
	return out, nil
}

// Exemplar is one exemplar the server stored.
type Exemplar struct {
	Series map[string]string // the series it belongs to
	Labels map[string]string // its own labels (trace_id, span_id)
	Value  float64
}

// Exemplars returns the exemplars of the series expr selects, stored
// between start and end.
func (s *Server) Exemplars(ctx context.Context, expr string, start, end time.Time) ([]Exemplar, error) {
	var data []struct {
		SeriesLabels map[string]string `json:"seriesLabels"`
		Exemplars    []struct {
			Labels map[string]string `json:"labels"`
			Value  string            `json:"value"`
		} `json:"exemplars"`
	}
	q := url.Values{"query": {expr}, "start": {unix(start)}, "end": {unix(end)}}
	if err := s.get(ctx, "/api/v1/query_exemplars", q, &data); err != nil {
		return nil, err
	}
	var out []Exemplar
	for _, d := range data {
		for _, e := range d.Exemplars {
			v, _ := strconv.ParseFloat(e.Value, 64)
			out = append(out, Exemplar{Series: d.SeriesLabels, Labels: e.Labels, Value: v})
		}
	}
	return out, nil
}

func unix(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixNano())/1e9, 'f', 3, 64)
}

// number reads a sample value, which the API writes as a string.
func number(v any) float64 {
	s, _ := v.(string)
	f, _ := strconv.ParseFloat(s, 64)
	return f
}
