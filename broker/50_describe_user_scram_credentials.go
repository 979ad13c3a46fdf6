package broker

// DescribeUserScramCredentials: v0-0
//
// Behaviour:
//   - KIP-554: answered by any broker from ZooKeeper (/config/users/<user>),
//     as Kafka's ZkAdminManager.describeUserScramCredentials: null or empty
//     users lists every user with a credential; a named user without one is
//     RESOURCE_NOT_FOUND, a user named twice DUPLICATE_RESOURCE. Only the
//     mechanism and iteration count are returned, never salt or keys.
//   - Describe on Cluster, else CLUSTER_AUTHORIZATION_FAILED for the whole
//     request (KafkaApis.handleDescribeUserScramCredentialsRequest).
//
// Version notes:
//   - v0: flexible.

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"samsa/broker/acl"
	"samsa/broker/security/scram"
	"samsa/zkutil"
)

func (b *Broker) handleDescribeUserSCRAMCredentials(r *request) (kmsg.Response, error) {
	req := r.body.(*kmsg.DescribeUserSCRAMCredentialsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeUserSCRAMCredentialsResponse)
	if !b.authorizedCluster(r, acl.OpDescribe) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return resp, nil
	}
	all, err := b.zk.GetAllEntityConfigs(zkutil.ConfigTypeUser)
	if err != nil {
		resp.ErrorCode = kerr.UnknownServerError.Code
		msg := err.Error()
		resp.ErrorMessage = &msg
		return resp, nil
	}
	creds := map[string][]kmsg.DescribeUserSCRAMCredentialsResponseResultCredentialInfo{}
	for sanitized, cfg := range all {
		for _, m := range []*scram.Mechanism{scram.SHA256, scram.SHA512} {
			c, err := scram.ParseCredential(cfg[m.Name()])
			if err != nil {
				continue
			}
			info := kmsg.NewDescribeUserSCRAMCredentialsResponseResultCredentialInfo()
			info.Mechanism, info.Iterations = m.Type, int32(c.Iterations)
			user := zkutil.Desanitize(sanitized)
			creds[user] = append(creds[user], info)
		}
	}
	result := func(user string) kmsg.DescribeUserSCRAMCredentialsResponseResult {
		res := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
		res.User, res.CredentialInfos = user, creds[user]
		return res
	}
	if len(req.Users) == 0 {
		users := make([]string, 0, len(creds))
		for u := range creds {
			users = append(users, u)
		}
		sort.Strings(users)
		for _, u := range users {
			resp.Results = append(resp.Results, result(u))
		}
		return resp, nil
	}
	count := map[string]int{}
	for _, u := range req.Users {
		count[u.Name]++
	}
	for _, u := range req.Users {
		res := result(u.Name)
		switch {
		case count[u.Name] > 1:
			res.ErrorCode, res.CredentialInfos = kerr.DuplicateResource.Code, nil
			res.ErrorMessage = kmsg.StringPtr("Cannot describe SCRAM credentials for the same user twice in a single request: " + u.Name)
		case len(res.CredentialInfos) == 0:
			res.ErrorCode = kerr.ResourceNotFound.Code
			res.ErrorMessage = kmsg.StringPtr("Attempt to describe a user credential that does not exist: " + u.Name)
		}
		resp.Results = append(resp.Results, res)
	}
	return resp, nil
}
