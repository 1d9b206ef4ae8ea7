"""(stage being written)"""
