package controller

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/peer"
)

// PeerDialer is the production Dialer: it connects with peer, which negotiates API
// versions with ApiVersions on every (re)connect. Options are passed to peer.Dial (for
// example peer.WithLogger, peer.WithDialTimeout).
type PeerDialer struct {
	// ClientID is the client id the controller's connections send, for example
	// "controller-1"; "" sends an empty client id.
	ClientID string
	Options  []peer.Option
}

// Dial connects to addr and negotiates versions.
func (d PeerDialer) Dial(ctx context.Context, addr string) (RequestClient, error) {
	c, err := peer.Dial(ctx, addr, d.ClientID, d.Options...)
	if err != nil {
		return nil, err
	}
	return peerClient{c: c}, nil
}

// peerClient adapts *peer.Client: requests go out pinned at the version the ChannelManager
// built them for, which MaxVersion has already bounded by the broker's range.
type peerClient struct{ c *peer.Client }

func (p peerClient) Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	resp, err := p.c.RequestPinned(ctx, req)
	if errors.Is(err, peer.ErrUnsupported) {
		return nil, fmt.Errorf("%w: %w", errVersionUnsupported, err)
	}
	return resp, err
}

func (p peerClient) MaxVersion(ctx context.Context, key int16) (int16, error) {
	_, maxV, err := p.c.Versions(ctx, key)
	if errors.Is(err, peer.ErrUnsupported) {
		return 0, fmt.Errorf("%w: %w", errVersionUnsupported, err)
	}
	return maxV, err
}

func (p peerClient) Close() error { return p.c.Close() }
