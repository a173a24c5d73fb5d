package fakebroker

import "time"

// Fault injection and counters, the same on a Broker and on the NameServer.

// Inject puts a fault in force on this broker (see Fault); it fails on a Fault without
// a valid action.
func (b *Broker) Inject(f Fault) (*Injection, error) { return b.ep.inject(f) }

// ClearFaults removes every fault of this broker.
func (b *Broker) ClearFaults() { b.ep.clearFaults() }

// CloseConnections closes every connection of the broker now (each side sees it closed,
// and the broker forgets their registrations, notifying the groups); new connections are
// accepted.
func (b *Broker) CloseConnections() { b.ep.closeConns() }

// RefuseConnections makes the broker reset every new connection as soon as it is
// accepted, for d, or until AcceptConnections when d ≤ 0. Open connections stay.
func (b *Broker) RefuseConnections(d time.Duration) { b.ep.refuseConns(d) }

// AcceptConnections ends RefuseConnections.
func (b *Broker) AcceptConnections() { b.ep.acceptConns() }

// Pause makes the broker accept connections and read requests but answer none, as a
// frozen process: requests, and the answers and notifications it would send, wait
// (up to 65536 of them; beyond, they are lost) until Resume, which handles and sends
// them in order. A Stop or Kill drops them.
func (b *Broker) Pause() { b.ep.pause() }

// Resume ends a Pause.
func (b *Broker) Resume() { b.ep.resume() }

// Requests returns how many requests of a code the broker received, whatever became
// of them (faults, pause). Only codes the broker handles are counted.
func (b *Broker) Requests(code int32) int { return b.ep.requests(code) }

// RequestCounts returns the count of every request code the broker received.
func (b *Broker) RequestCounts() map[int32]int { return b.ep.requestCounts() }

// Inject puts a fault in force on the name server (see Fault).
func (ns *NameServer) Inject(f Fault) (*Injection, error) { return ns.ep.inject(f) }

// ClearFaults removes every fault of the name server.
func (ns *NameServer) ClearFaults() { ns.ep.clearFaults() }

// CloseConnections closes every connection of the name server now.
func (ns *NameServer) CloseConnections() { ns.ep.closeConns() }

// RefuseConnections resets every new connection for d, or until AcceptConnections when
// d ≤ 0.
func (ns *NameServer) RefuseConnections(d time.Duration) { ns.ep.refuseConns(d) }

// AcceptConnections ends RefuseConnections.
func (ns *NameServer) AcceptConnections() { ns.ep.acceptConns() }

// Pause makes the name server read requests but answer none until Resume.
func (ns *NameServer) Pause() { ns.ep.pause() }

// Resume ends a Pause, answering what waited.
func (ns *NameServer) Resume() { ns.ep.resume() }

// Requests returns how many requests of a code the name server received.
func (ns *NameServer) Requests(code int32) int { return ns.ep.requests(code) }

// RequestCounts returns the count of every request code the name server received.
func (ns *NameServer) RequestCounts() map[int32]int { return ns.ep.requestCounts() }
