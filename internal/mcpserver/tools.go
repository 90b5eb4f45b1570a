package mcpserver

// Registry is the one table of every tool. Registration, the manifest,
// get_capabilities and docs/tools.md all read it.
func Registry() []*Tool {
	var all []*Tool
	all = append(all, metaTools()...)
	all = append(all, dynamicTools()...)
	all = append(all, xReadTools()...)
	all = append(all, listReadTools()...)
	all = append(all, dmReadTools()...)
	all = append(all, mutationTools(false)...)
	all = append(all, dryRunTools()...)
	all = append(all, universalTools()...)
	all = append(all, gatewayTools()...)
	all = append(all, analyticsTools()...)
	all = append(all, discoveryTools()...)
	all = append(all, contentTools()...)
	all = append(all, queueTools()...)
	all = append(all, recurringTools()...)
	all = append(all, evergreenTools()...)
	all = append(all, exportTools()...)
	all = append(all, bestTimesTools()...)
	return all
}
