package svc

import "net/http"

type Server struct {
	addr string
}

func Serve(addr string, handler http.Handler) error {
	return http.ListenAndServe(addr, handler)
}

func (s *Server) Start(handler http.Handler) error {
	return Serve(s.addr, handler)
}
