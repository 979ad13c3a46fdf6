package broker

// AlterUserScramCredentials: v0-0
//
// Behaviour:
//   - KIP-554, controller only (NOT_CONTROLLER elsewhere), as Kafka 2.8's
//     ZkAdminManager.alterUserScramCredentials: the client sends the salt and
//     the salted password (never the password); the broker derives
//     stored_key and server_key and writes Kafka's credential string under
//     /config/users/<sanitized user> (keeping the user's quota keys), with a
//     users/<user> change notification so every broker's cache follows.
//   - Per user, all or nothing: an empty name or iterations outside
//     4096..16384 is UNACCEPTABLE_CREDENTIAL, an unknown mechanism
//     UNSUPPORTED_SASL_MECHANISM, the same user and mechanism twice
//     DUPLICATE_RESOURCE, deleting a missing credential RESOURCE_NOT_FOUND.
//   - Alter on Cluster, else every user's result is
//     CLUSTER_AUTHORIZATION_FAILED (KafkaApis.handleAlterUserScramCredentialsRequest).
//
// Version notes:
//   - v0: flexible.

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
	"samsa/broker/security/scram"
	"samsa/zkutil"
)

// scramChange is one user's requested changes.
type scramChange struct {
	upserts map[string]scram.Credential // by mechanism name
	deletes map[string]bool
	err     *kerr.Error
	msg     string
}

func (b *Broker) handleAlterUserSCRAMCredentials(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.AlterUserSCRAMCredentialsRequest)
	resp := req.ResponseKind().(*kmsg.AlterUserSCRAMCredentialsResponse)
	var order []string
	changes := map[string]*scramChange{}
	get := func(user string) *scramChange {
		c, ok := changes[user]
		if !ok {
			c = &scramChange{upserts: map[string]scram.Credential{}, deletes: map[string]bool{}}
			changes[user] = c
			order = append(order, user)
		}
		return c
	}
	fail := func(c *scramChange, e *kerr.Error, msg string) {
		if c.err == nil {
			c.err, c.msg = e, msg
		}
	}
	for _, d := range req.Deletions {
		c := get(d.Name)
		m := scram.ByType(d.Mechanism)
		switch {
		case d.Name == "":
			fail(c, kerr.UnacceptableCredential, "Username must not be empty")
		case m == nil:
			fail(c, kerr.UnsupportedSaslMechanism, "Unknown SCRAM mechanism")
		case c.deletes[m.Name()]:
			fail(c, kerr.DuplicateResource, "A user credential cannot be altered twice in the same request")
		default:
			c.deletes[m.Name()] = true
		}
	}
	for _, u := range req.Upsertions {
		c := get(u.Name)
		m := scram.ByType(u.Mechanism)
		switch {
		case u.Name == "":
			fail(c, kerr.UnacceptableCredential, "Username must not be empty")
		case m == nil:
			fail(c, kerr.UnsupportedSaslMechanism, "Unknown SCRAM mechanism")
		case u.Iterations < scram.MinIterations:
			fail(c, kerr.UnacceptableCredential, "Too few iterations")
		case u.Iterations > scram.MaxIterations:
			fail(c, kerr.UnacceptableCredential, "Too many iterations")
		case c.deletes[m.Name()]:
			fail(c, kerr.DuplicateResource, "A user credential cannot be altered twice in the same request")
		default:
			if _, dup := c.upserts[m.Name()]; dup {
				fail(c, kerr.DuplicateResource, "A user credential cannot be altered twice in the same request")
				continue
			}
			c.upserts[m.Name()] = m.CredentialFromSalted(u.SaltedPassword, u.Salt, int(u.Iterations))
		}
	}
	allowed := b.authorizedCluster(r, acl.OpAlter)
	for _, user := range order {
		c := changes[user]
		if !allowed {
			c.err, c.msg = kerr.ClusterAuthorizationFailed, ""
		}
		res := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
		res.User = user
		if c.err == nil {
			if err := b.applySCRAMAlter(user, c); err != nil {
				fail(c, kerr.UnknownServerError, err.Error())
			}
		}
		if c.err != nil {
			res.ErrorCode = c.err.Code
			if c.msg != "" {
				res.ErrorMessage = kmsg.StringPtr(c.msg)
			}
		}
		resp.Results = append(resp.Results, res)
	}
	return resp, nil
}

// applySCRAMAlter writes one user's changes to /config/users/<user>.
func (b *Broker) applySCRAMAlter(user string, c *scramChange) error {
	name := zkutil.Sanitize(user)
	cfg, err := b.zk.GetEntityConfig(zkutil.ConfigTypeUser, name)
	if err != nil {
		return fmt.Errorf("reading /config/users/%s: %w", name, err)
	}
	for mech := range c.deletes {
		if _, ok := cfg[mech]; !ok {
			c.err, c.msg = kerr.ResourceNotFound, "Attempt to delete a user credential that does not exist"
			return nil
		}
		delete(cfg, mech)
	}
	for mech, cred := range c.upserts {
		cfg[mech] = cred.String()
	}
	return b.zk.SetEntityConfig(zkutil.ConfigTypeUser, name, cfg)
}
