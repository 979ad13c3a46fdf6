package zkutil

import "fmt"

// Log-dir event notifications (KIP-112, Kafka 2.8 LogDirEventNotificationZNode
// and LogDirEventNotificationSequenceZNode). A broker whose log dir failed
// writes /log_dir_event_notification/log_dir_event_<10-digit seq> holding
// {"version":1,"broker":<id>,"event":1}; the controller reads every child,
// deletes them (fenced by its epoch zkVersion) and sends LeaderAndIsr for
// every partition of the named brokers.
//
// The writer, lister and deleter (WriteLogDirEventNotification,
// GetLogDirEventNotifications, DeleteLogDirEventNotifications) and the
// broker-only decoder (ReadLogDirEventNotification, DecodeLogDirEvent) live
// in ops_notify.go and codec_admin.go; this file adds the event type.

// EncodeLogDirEventNotification returns
// {"version":1,"broker":<brokerID>,"event":<event>}. Brokers write event
// LogDirFailureEvent (use WriteLogDirEventNotification); other values exist
// for tests of readers.
func EncodeLogDirEventNotification(brokerID int32, event int) []byte {
	version := 1
	return marshal(logDirEventJSON{Version: &version, Broker: &brokerID, Event: &event})
}

// DecodeLogDirEventNotification parses a log_dir_event_ notification into
// its broker id and event type. A notification without "event" is a
// LogDirFailureEvent: Kafka's own decoder reads only "broker", and the event
// has had one value since KIP-112. The version is not checked (Kafka does
// not). Errors wrap ErrMalformed.
func DecodeLogDirEventNotification(data []byte) (brokerID int32, event int, err error) {
	const kind = "log dir event"
	var j logDirEventJSON
	if err := unmarshal(kind, data, &j); err != nil {
		return 0, 0, err
	}
	if j.Broker == nil {
		return 0, 0, malformed(kind, fmt.Errorf("missing broker"))
	}
	event = LogDirFailureEvent
	if j.Event != nil {
		event = *j.Event
	}
	return *j.Broker, event, nil
}

// ReadLogDirEvent reads one notification by child name (as returned by
// GetLogDirEventNotifications) and returns its broker id and event type.
// Errors: ErrNoNode (already deleted), ErrMalformed.
func (c *Client) ReadLogDirEvent(node string) (brokerID int32, event int, err error) {
	data, _, err := c.Get(LogDirEventNotificationSeqPath(node))
	if err != nil {
		return 0, 0, err
	}
	return DecodeLogDirEventNotification(data)
}
