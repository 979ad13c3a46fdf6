package config

import (
	"reflect"
	"testing"
)

func TestConfigParseValue(t *testing.T) {
	tests := []struct {
		typ  Type
		in   string
		want any
		bad  bool
	}{
		{TypeBool, " TRUE ", true, false},
		{TypeBool, "False", false, false},
		{TypeBool, "yes", nil, true},
		{TypeShort, "32767", int16(32767), false},
		{TypeShort, "32768", nil, true},
		{TypeInt, " -1 ", int32(-1), false},
		{TypeInt, "2147483648", nil, true},
		{TypeInt, "1e3", nil, true},
		{TypeLong, "9223372036854775807", int64(9223372036854775807), false},
		{TypeLong, "9223372036854775808", nil, true},
		{TypeDouble, "0.5", 0.5, false},
		{TypeDouble, "1.7976931348623157E308", 1.7976931348623157e308, false},
		{TypeDouble, "NaN", nil, true},
		{TypeString, "  x y  ", "x y", false},
		{TypeList, "", []string{}, false},
		{TypeList, " a , b ,c", []string{"a", "b", "c"}, false},
	}
	for _, tc := range tests {
		got, err := parseValue(tc.typ, tc.in)
		if (err != nil) != tc.bad {
			t.Errorf("%v %q: err %v", tc.typ, tc.in, err)
			continue
		}
		if !tc.bad && !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%v %q: got %#v, want %#v", tc.typ, tc.in, got, tc.want)
		}
		if !tc.bad && tc.typ != TypeDouble {
			if back, _ := parseValue(tc.typ, formatValue(got)); !reflect.DeepEqual(back, got) {
				t.Errorf("%v %q: format round trip gave %#v", tc.typ, tc.in, back)
			}
		}
	}
}

func TestConfigValidators(t *testing.T) {
	if err := atLeast(1).Check(int32(0)); err == nil {
		t.Error("atLeast(1) accepted 0")
	}
	if err := between(0, 1).Check(1.5); err == nil {
		t.Error("between(0,1) accepted 1.5")
	}
	if err := oneOf("a", "b").Check([]string{"a", "c"}); err == nil {
		t.Error("oneOf accepted a list with c")
	}
	if got := atLeast(14).String(); got != "[14,...]" {
		t.Errorf("atLeast string %q", got)
	}
	if got := between(0, 65535).String(); got != "[0,...,65535]" {
		t.Errorf("between string %q", got)
	}
	if err := throttledReplicas.Check([]string{"*"}); err != nil {
		t.Error(err)
	}
	if err := throttledReplicas.Check([]string{"0:1", "1:2"}); err != nil {
		t.Error(err)
	}
	if err := throttledReplicas.Check([]string{"0:1", "*"}); err == nil {
		t.Error("mixed * accepted")
	}
}
