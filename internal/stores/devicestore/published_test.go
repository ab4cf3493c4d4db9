package devicestore

import (
	"reflect"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/utils/ptr"
)

// TestSameSelectorInput_ComparesEveryField: sameSelectorInput compares by hand the fields
// of what the CEL evaluator reads; a field the API or the evaluator's input gains must be
// compared too (this fails until the counts here are updated with it), and a change of any
// compared field is a different input.
func TestSameSelectorInput_ComparesEveryField(t *testing.T) {
	for typ, want := range map[reflect.Type]int{
		reflect.TypeFor[cel.Device]():                 4, // Driver (the pool's), AllowMultipleAllocations, Attributes, Capacity
		reflect.TypeFor[resourcev1.DeviceAttribute](): 8,
		reflect.TypeFor[resourcev1.DeviceCapacity]():  2, // Value; RequestPolicy is not an input
	} {
		if got := typ.NumField(); got != want {
			t.Errorf("%s has %d fields, sameSelectorInput knows %d: compare the new one", typ, got, want)
		}
	}
	base := func() *resourcev1.Device {
		return &resourcev1.Device{
			Name: "gpu0",
			Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
				"model": {StringValue: ptr.To("a")}, "index": {IntValue: ptr.To(int64(1))}, "ok": {BoolValue: ptr.To(true)},
				"driverVersion": {VersionValue: ptr.To("1.0.0")}, "ids": {IntValues: []int64{1}}, "flags": {BoolValues: []bool{true}},
				"names": {StringValues: []string{"x"}}, "versions": {VersionValues: []string{"1.0.0"}},
			},
			Capacity: map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{"memory": {Value: resource.MustParse("1Gi")}},
		}
	}
	if !sameSelectorInput(base(), base()) {
		t.Fatal("equal devices differ")
	}
	same := base()
	same.Name, same.Capacity["memory"] = "other", resourcev1.DeviceCapacity{Value: resource.MustParse("1024Mi")}
	if !sameSelectorInput(base(), same) {
		t.Error("another name and an equal capacity written otherwise: want the same input")
	}
	for name, change := range map[string]func(d *resourcev1.Device){
		"multiple allocations": func(d *resourcev1.Device) { d.AllowMultipleAllocations = ptr.To(true) },
		"string": func(d *resourcev1.Device) {
			d.Attributes["model"] = resourcev1.DeviceAttribute{StringValue: ptr.To("b")}
		},
		"int": func(d *resourcev1.Device) {
			d.Attributes["index"] = resourcev1.DeviceAttribute{IntValue: ptr.To(int64(2))}
		},
		"bool": func(d *resourcev1.Device) { d.Attributes["ok"] = resourcev1.DeviceAttribute{BoolValue: ptr.To(false)} },
		"version": func(d *resourcev1.Device) {
			d.Attributes["driverVersion"] = resourcev1.DeviceAttribute{VersionValue: ptr.To("1.0.1")}
		},
		"ints": func(d *resourcev1.Device) { d.Attributes["ids"] = resourcev1.DeviceAttribute{IntValues: []int64{1, 2}} },
		"bools": func(d *resourcev1.Device) {
			d.Attributes["flags"] = resourcev1.DeviceAttribute{BoolValues: []bool{false}}
		},
		"strings": func(d *resourcev1.Device) {
			d.Attributes["names"] = resourcev1.DeviceAttribute{StringValues: []string{}}
		},
		"versions": func(d *resourcev1.Device) {
			d.Attributes["versions"] = resourcev1.DeviceAttribute{VersionValues: []string{"2.0.0"}}
		},
		"attribute renamed": func(d *resourcev1.Device) {
			d.Attributes["model2"] = d.Attributes["model"]
			delete(d.Attributes, "model")
		},
		"attribute added": func(d *resourcev1.Device) {
			d.Attributes["new"] = resourcev1.DeviceAttribute{IntValue: ptr.To(int64(0))}
		},
		"capacity": func(d *resourcev1.Device) {
			d.Capacity["memory"] = resourcev1.DeviceCapacity{Value: resource.MustParse("2Gi")}
		},
		"capacity format": func(d *resourcev1.Device) {
			d.Capacity["memory"] = resourcev1.DeviceCapacity{Value: resource.MustParse("1073741824")}
		},
		"capacity added": func(d *resourcev1.Device) {
			d.Capacity["cores"] = resourcev1.DeviceCapacity{Value: resource.MustParse("1")}
		},
	} {
		d := base()
		change(d)
		if sameSelectorInput(base(), d) || sameSelectorInput(d, base()) {
			t.Errorf("%s changed: want another input", name)
		}
	}
}
