// Package models holds the models of the paper's experiments and the
// project's CPU tasks; each cites its source.
//
// A classifier is a plain function value of type
// func(scope *model.Scope, x *Node) *Node returning the logits
// [batch, classes]; the convolutional ones (CNN, ResNet20, ResNet18) take NHWC
// images x [N,H,W,C] and are built on package ops.
package models
