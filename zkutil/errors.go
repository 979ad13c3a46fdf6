package zkutil

import (
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"github.com/go-zookeeper/zk"
)

// Sentinel errors returned by Client methods. Callers test them with errors.Is;
// the returned errors wrap them with the operation and the znode path.
var (
	// ErrNoNode means the znode does not exist (ZooKeeper NONODE).
	ErrNoNode = errors.New("zkutil: node does not exist")
	// ErrNodeExists means a create found the znode already there (NODEEXISTS).
	ErrNodeExists = errors.New("zkutil: node already exists")
	// ErrBadVersion means a conditional write or check saw another zkVersion (BADVERSION).
	ErrBadVersion = errors.New("zkutil: bad version")
	// ErrNotEmpty means a delete hit a znode that still has children (NOTEMPTY).
	ErrNotEmpty = errors.New("zkutil: node has children")
	// ErrSessionExpired means the ZooKeeper session expired while the operation ran.
	// The Client opens a new session by itself and runs the OnNewSession hooks.
	ErrSessionExpired = errors.New("zkutil: session expired")
	// ErrConnectionLoss means the operation could not reach ZooKeeper within the
	// session timeout (CONNECTIONLOSS after retries).
	ErrConnectionLoss = errors.New("zkutil: connection loss")
	// ErrClosed means the Client was closed.
	ErrClosed = errors.New("zkutil: client closed")
	// ErrControllerMoved means an epoch-checked multi-op failed its check on
	// /controller_epoch: another controller was elected since (Kafka
	// ControllerMovedException, KAFKA-6082). The controller must resign.
	ErrControllerMoved = errors.New("zkutil: controller moved")
	// ErrControllerExists means another broker holds /controller.
	ErrControllerExists = errors.New("zkutil: controller already elected")
	// ErrBrokerIDExists means /brokers/ids/<id> is held by another live session.
	ErrBrokerIDExists = errors.New("zkutil: broker id already registered")
	// ErrTopicExists means /brokers/topics/<t> already exists.
	ErrTopicExists = errors.New("zkutil: topic already exists")
	// ErrTopicCollision means the topic name collides with an existing topic
	// once '.' is replaced by '_' (Kafka InvalidTopicException).
	ErrTopicCollision = errors.New("zkutil: topic name collides with an existing topic")
	// ErrInvalidTopic means the topic name is not a legal Kafka topic name.
	ErrInvalidTopic = errors.New("zkutil: invalid topic name")
	// ErrMarkedForDeletion means /admin/delete_topics/<t> already exists.
	ErrMarkedForDeletion = errors.New("zkutil: topic already marked for deletion")
	// ErrNoAuth: the znode's ACL does not let this session do that
	// (zookeeper.set.acl written by another identity).
	ErrNoAuth = errors.New("zkutil: not authorized by the znode's ACL")
	// ErrMalformed means a znode held data that does not decode.
	ErrMalformed = errors.New("zkutil: malformed znode data")
	// ErrInvalidPath means a path or connect string is not valid.
	ErrInvalidPath = errors.New("zkutil: invalid path")
	// ErrNoServer means ZooKeeper could not be reached before the connection timeout.
	ErrNoServer = errors.New("zkutil: could not connect to zookeeper")
)

// translate maps a go-zookeeper error onto the zkutil sentinels, adding the
// operation and path. It returns nil for nil.
func translate(err error, op, path string) error {
	if err == nil {
		return nil
	}
	var s error
	switch {
	case errors.Is(err, zk.ErrNoNode):
		s = ErrNoNode
	case errors.Is(err, zk.ErrNodeExists):
		s = ErrNodeExists
	case errors.Is(err, zk.ErrBadVersion):
		s = ErrBadVersion
	case errors.Is(err, zk.ErrNotEmpty):
		s = ErrNotEmpty
	case errors.Is(err, zk.ErrNoAuth):
		s = ErrNoAuth
	case errors.Is(err, zk.ErrSessionExpired):
		s = ErrSessionExpired
	case errors.Is(err, zk.ErrClosing):
		s = ErrClosed
	case retryable(err):
		s = ErrConnectionLoss
	case errors.Is(err, zk.ErrInvalidPath):
		s = ErrInvalidPath
	default:
		return fmt.Errorf("zkutil: %s %s: %w", op, path, err)
	}
	return fmt.Errorf("%w: %s %s", s, op, path)
}

// retryable reports whether a raw go-zookeeper error is a transient
// connection problem after which the request may be sent again. Besides its
// own sentinels, go-zookeeper hands back the raw socket error when writing a
// request fails (e.g. "connection reset by peer").
func retryable(err error) bool {
	var netErr net.Error
	return errors.Is(err, zk.ErrConnectionClosed) || errors.Is(err, zk.ErrNoServer) ||
		errors.Is(err, zk.ErrSessionMoved) || errors.As(err, &netErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
