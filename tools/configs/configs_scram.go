package configs

// kafka-configs for SCRAM credentials (Kafka 2.8 ConfigCommand, KIP-554):
//
//	--alter --entity-type users --entity-name alice
//	    --add-config 'SCRAM-SHA-256=[iterations=8192,password=alice-secret],SCRAM-SHA-512=[password=alice-secret]'
//	    --delete-config SCRAM-SHA-512
//	--describe --entity-type users [--entity-name alice]
//
// With --zookeeper the credential is derived here (random salt, the
// broker's own scram formatter) and stored as Kafka stores it; with
// --bootstrap-server it goes through AlterUserScramCredentials (Sarama sends
// salt and salted password, never the password) and is described with
// DescribeUserScramCredentials:
//
//	SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192, SCRAM-SHA-512=iterations=4096

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/IBM/sarama"

	"samsa/broker/security/scram"
	"samsa/tools/internal/tool"
)

// isSCRAMKey reports whether k names a SCRAM mechanism.
func isSCRAMKey(k string) bool { return scram.ByName(k) != nil }

// parseSCRAMValue parses "iterations=N,password=P" (brackets already
// removed); iterations defaults to 4096.
func parseSCRAMValue(mech, v string) (password string, iterations int, err error) {
	iterations = scram.MinIterations
	for _, part := range strings.Split(v, ",") {
		k, val, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "password":
			password = val
		case "iterations":
			if iterations, err = strconv.Atoi(val); err != nil {
				return "", 0, tool.Errorf("Invalid value %s for iterations of %s", val, mech)
			}
		default:
			return "", 0, tool.Errorf("Invalid credential property %s=%s", k, val)
		}
	}
	if password == "" {
		return "", 0, tool.Errorf("Invalid credential property: password must be specified for %s", mech)
	}
	if iterations < scram.MinIterations {
		return "", 0, tool.Errorf("Iterations %d is less than the minimum %d required for %s", iterations, scram.MinIterations, mech)
	}
	return password, iterations, nil
}

// scramToStored replaces each SCRAM-* entry of add (the --zookeeper path)
// with Kafka's stored credential string.
func scramToStored(add map[string]string) error {
	for k, v := range add {
		m := scram.ByName(k)
		if m == nil {
			continue
		}
		pw, it, err := parseSCRAMValue(k, v)
		if err != nil {
			return err
		}
		add[k] = m.NewCredential(pw, it).String()
	}
	return nil
}

// alterSCRAMAdmin sends the SCRAM part of a users --alter with
// AlterUserScramCredentials; it returns the non-SCRAM rest.
func alterSCRAMAdmin(admin sarama.ClusterAdmin, o *configsOpts) (rest map[string]string, restDel []string, err error) {
	rest = map[string]string{}
	var ups []sarama.AlterUserScramCredentialsUpsert
	var dels []sarama.AlterUserScramCredentialsDelete
	for _, k := range tool.SortedKeys(o.add) {
		if !isSCRAMKey(k) {
			rest[k] = o.add[k]
			continue
		}
		pw, it, err := parseSCRAMValue(k, o.add[k])
		if err != nil {
			return nil, nil, err
		}
		ups = append(ups, sarama.AlterUserScramCredentialsUpsert{Name: o.entity.name, Mechanism: saramaMech(k),
			Iterations: int32(it), Password: []byte(pw)})
	}
	for _, k := range o.del {
		if !isSCRAMKey(k) {
			restDel = append(restDel, k)
			continue
		}
		dels = append(dels, sarama.AlterUserScramCredentialsDelete{Name: o.entity.name, Mechanism: saramaMech(k)})
	}
	if len(ups)+len(dels) == 0 {
		return rest, restDel, nil
	}
	if o.entity.name == "" {
		return nil, nil, tool.Error("SCRAM credentials can only be altered for a named user")
	}
	var res []*sarama.AlterUserScramCredentialsResult
	if len(ups) > 0 {
		r, err := admin.UpsertUserScramCredentials(ups)
		if err != nil {
			return nil, nil, err
		}
		res = append(res, r...)
	}
	if len(dels) > 0 {
		r, err := admin.DeleteUserScramCredentials(dels)
		if err != nil {
			return nil, nil, err
		}
		res = append(res, r...)
	}
	for _, r := range res {
		if r.ErrorCode != 0 {
			msg := ""
			if r.ErrorMessage != nil {
				msg = *r.ErrorMessage
			}
			return nil, nil, tool.Errorf("Error altering SCRAM credentials for user '%s': %s: %s", r.User, sarama.KError(r.ErrorCode).Error(), msg)
		}
	}
	return rest, restDel, nil
}

func saramaMech(name string) sarama.ScramMechanismType {
	if name == "SCRAM-SHA-512" {
		return sarama.SCRAM_MECHANISM_SHA_512
	}
	return sarama.SCRAM_MECHANISM_SHA_256
}

// describeSCRAMAdmin prints the user's (or every user's) SCRAM credential
// configs, mechanism and iterations only.
func describeSCRAMAdmin(admin sarama.ClusterAdmin, o *configsOpts, out io.Writer) error {
	var users []string
	if o.entity.name != "" {
		users = []string{o.entity.name}
	}
	res, err := admin.DescribeUserScramCredentials(users)
	if err != nil {
		return err
	}
	sort.Slice(res, func(i, j int) bool { return res[i].User < res[j].User })
	for _, r := range res {
		if r.ErrorCode != 0 || len(r.CredentialInfos) == 0 {
			continue // Kafka prints nothing for a user without credentials
		}
		var parts []string
		for _, ci := range r.CredentialInfos {
			name := "SCRAM-SHA-256"
			if ci.Mechanism == sarama.SCRAM_MECHANISM_SHA_512 {
				name = "SCRAM-SHA-512"
			}
			parts = append(parts, fmt.Sprintf("%s=iterations=%d", name, ci.Iterations))
		}
		sort.Strings(parts)
		fmt.Fprintf(out, "SCRAM credential configs for user-principal '%s' are %s\n", r.User, strings.Join(parts, ", "))
	}
	return nil
}
