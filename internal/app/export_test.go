package app

// WaitIntegrityRun waits for the database's background quick_check, if one
// is running, to reach its verdict.
func (a *App) WaitIntegrityRun() {
	r := &a.top().integrity
	r.mu.Lock()
	running := r.running
	r.mu.Unlock()
	if running != nil {
		<-running
	}
}
